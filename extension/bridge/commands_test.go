package bridge

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/webcodex/webcodex/cdp/policy"
)

// TestCommandTableIsNarrowerThanRawCDP holds the bridge's table to the raw
// CDP policy's classification: every command is of a page domain (never
// browser-wide or cross-origin), and the only ones raw CDP withholds by
// name are those a page verb gates itself (the frame gate for worlds and
// frames, the origin gate for navigate, the upload directory).
func TestCommandTableIsNarrowerThanRawCDP(t *testing.T) {
	t.Parallel()
	classes := map[string]policy.Class{}
	for _, d := range policy.Domains() {
		classes[d.Name] = d.Class
	}
	gatedByAVerb := []string{"DOM.getFrameOwner", "DOM.setFileInputFiles", "Page.createIsolatedWorld", "Page.getFrameTree", "Page.navigate"}
	var withheld []string
	for _, c := range policy.WithheldCommands() {
		withheld = append(withheld, c.Method)
	}
	var got []string
	for _, c := range CommandTable() {
		domain, _, _ := strings.Cut(c.Method, ".")
		switch classes[domain] {
		case policy.ClassPage, policy.ClassPageProfile, policy.ClassMeta:
		default:
			t.Errorf("%s: its domain is %q, not a page domain", c.Method, classes[domain])
		}
		if slices.Contains(withheld, c.Method) {
			got = append(got, c.Method)
		}
	}
	if !slices.Equal(got, gatedByAVerb) {
		t.Fatalf("commands raw CDP withholds in the bridge table: %v, want exactly %v", got, gatedByAVerb)
	}
	for _, m := range []string{"Browser.close", "Target.createTarget", "Storage.getCookies", "Network.getAllCookies", "Fetch.enable", "Page.addScriptToEvaluateOnNewDocument"} {
		if checkCommand(m, nil) == nil {
			t.Errorf("%s passes the bridge table", m)
		}
	}
}

func TestCommandParams(t *testing.T) {
	t.Parallel()
	ok := map[string]string{
		"Page.navigate":            `{"url":"https://shop.test/"}`,
		"Page.createIsolatedWorld": `{"frameId":"F","worldName":"w","grantUniveralAccess":false}`,
		"Runtime.evaluate":         `{"expression":"1","contextId":3,"returnByValue":true}`,
		"Page.enable":              ``,
	}
	for m, p := range ok {
		if err := checkCommand(m, json.RawMessage(p)); err != nil {
			t.Errorf("%s %s: %v", m, p, err)
		}
	}
	bad := map[string]string{
		"Page.navigate":            `{"url":"https://shop.test/","referrer":"https://x.test/"}`,
		"Page.createIsolatedWorld": `{"frameId":"F","grantUniveralAccess":true}`,
		"Runtime.evaluate":         `{"expression":"1","includeCommandLineAPI":true}`,
		"DOM.describeNode":         `{"nodeId":1,"pierce":true}`,
		"Page.enable":              `[1]`,
	}
	for m, p := range bad {
		if err := checkCommand(m, json.RawMessage(p)); err == nil {
			t.Errorf("%s %s passed", m, p)
		}
	}
}
