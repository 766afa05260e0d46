package admincmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/webcodex/webcodex/cmd/internal/cmdutil"
	"github.com/webcodex/webcodex/cmd/internal/localapi"
	"github.com/webcodex/webcodex/extension/install"
	"github.com/webcodex/webcodex/platform"
)

// InstallBridgeResult is `webcodex install-bridge --json`. It names the
// manifest's file, never its directory.
type InstallBridgeResult struct {
	Action   string `json:"action"` // installed, unchanged or updated
	Browser  string `json:"browser"`
	Manifest string `json:"manifest"`
	BackedUp bool   `json:"backedUp"`
	Origin   string `json:"origin"`
	Next     string `json:"next"`
}

// NewCmdInstallBridge is `webcodex install-bridge`: it registers the
// native host for the current user only (package install), and records
// the extension origin the host serves. It lives here, not in cli, because
// it touches the file system through the platform's private-directory
// checks; it never starts a Runner.
func NewCmdInstallBridge(f *cmdutil.Factory) *cobra.Command {
	var opts install.Options
	var host string
	cmd := &cobra.Command{
		Use:   "install-bridge [--browser chromium|chrome] [--extension-id ID] [--user-data-dir DIR]",
		Short: "Register the webcodex extension's native messaging host for this user (a changed manifest is backed up)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			state, err := localapi.StateDir()
			if err != nil {
				return err
			}
			if state, err = filepath.Abs(state); err != nil {
				return fmt.Errorf("install-bridge: state directory: %w", err)
			}
			if err := platform.EnsurePrivateDir(state); err != nil {
				return err
			}
			if host == "" {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("install-bridge: find webcodex: %w", err)
				}
				if exe, err = filepath.EvalSymlinks(exe); err != nil {
					return fmt.Errorf("install-bridge: find webcodex: %w", err)
				}
				host = filepath.Join(filepath.Dir(exe), "webcodex-bridge-host")
			}
			opts.HostPath, opts.StateDir = host, state
			res, err := install.Install(opts)
			if err != nil {
				return err
			}
			browser := opts.Browser
			if browser == "" {
				browser = "chromium"
			}
			if opts.UserDataDir != "" {
				browser = "the profile given with --user-data-dir"
			}
			out := InstallBridgeResult{Action: res.Action, Browser: browser, Manifest: filepath.Base(res.Manifest), BackedUp: res.Backup != "", Origin: res.Origin,
				Next: "load the extension (chrome://extensions, Developer mode, Load unpacked: the repository's extension/ directory), then restart the Runner (webcodex stop) so it opens the bridge"}
			if f.JSON {
				return cmdutil.EmitJSON(f.IO.Out, out)
			}
			fmt.Fprintf(f.IO.Out, "%s the native messaging host for %s (%s, allowed origin %s)\n", out.Action, out.Browser, out.Manifest, out.Origin)
			if out.BackedUp {
				fmt.Fprintln(f.IO.Out, "the previous manifest was backed up beside it as "+out.Manifest+".previous.<sha256>")
			}
			fmt.Fprintln(f.IO.Out, "next: "+out.Next)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Browser, "browser", "chromium", "chromium or chrome: whose user-level native messaging directory to write")
	cmd.Flags().StringVar(&opts.ExtensionID, "extension-id", install.DefaultExtensionID, "the extension's id (chrome://extensions shows it)")
	cmd.Flags().StringVar(&opts.UserDataDir, "user-data-dir", "", "install into this browser profile instead (a browser run with --user-data-dir)")
	cmd.Flags().StringVar(&host, "host", "", "the webcodex-bridge-host binary (default: beside webcodex)")
	return cmd
}
