package admincmd

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/runner"
	"github.com/webcodex/webcodex/cmd/internal/secret"
)

// NewCmdServe is `webcodex serve`: the Runner daemon in the foreground. It
// lives here, not in cli, because the CLI stays a thin client.
func NewCmdServe(f *cmdutil.Factory) *cobra.Command {
	var uploadDir string
	var secrets []string
	var idleExit time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Runner daemon (CLI commands start one in the background when needed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := secret.Parse(secrets, os.Getenv)
			if err != nil {
				return &cmdutil.UsageError{Err: err}
			}
			dir, err := runner.StateDir()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			logger := log.New(f.IO.Err, "", log.LstdFlags)
			err = runner.Serve(ctx, runner.Options{StateDir: dir, Version: cmdutil.Version, Logf: logger.Printf, LogWhere: runner.LogWhere(dir, f.IO.Err, "webcodex serve"), UploadDir: uploadDir, Secrets: set, Stop: stop, IdleExit: idleExit})
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&idleExit, "idle-exit", 0, "exit after this long with no browser and no client (0: never; the CLI starts its background Runner with 10m, or $WEBCODEX_IDLE_EXIT)")
	cmd.Flags().StringVar(&uploadDir, "upload-dir", os.Getenv("WEBCODEX_UPLOAD_DIR"), "the one directory files may be uploaded from (unset: uploads refused)")
	cmd.Flags().StringArrayVar(&secrets, "secret", nil, "NAME=env:VAR@ORIGIN[,ORIGIN] or NAME=file:PATH@ORIGIN: a value typed as {{secret.NAME}} only into pages of ORIGIN, never shown (repeatable)")
	return cmd
}
