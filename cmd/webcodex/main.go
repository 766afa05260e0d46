// Command webcodex lets an agent drive Chromium over the Chrome DevTools
// Protocol with boundaries a reviewer can read. See README.md.
package main

import (
	"os"

	"github.com/webcodex/webcodex/cmd/internal/admincmd"
	"github.com/webcodex/webcodex/cmd/internal/cli"
	"github.com/webcodex/webcodex/cmd/internal/mcp"
	"github.com/webcodex/webcodex/cmd/internal/speccmd"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, admincmd.NewCmdServe, admincmd.NewCmdPolicy, admincmd.NewCmdDoctor, admincmd.NewCmdAudit, mcp.NewCmdMCP,
		cli.NewCmdDiscover, cli.NewCmdBridge, admincmd.NewCmdInstallBridge, speccmd.NewCmdSpec))
}
