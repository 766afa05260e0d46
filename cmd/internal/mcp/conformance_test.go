package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// callPlan is test/mcp-sdk/calls.json: one call of every tool, shared with
// the TypeScript SDK's conformance test so both clients make the same calls.
type callPlan struct {
	Page       string `json:"page"`
	UploadFile string `json:"uploadFile"`
	Calls      []struct {
		Tool   string         `json:"tool"`
		Args   map[string]any `json:"args"`
		Expect string         `json:"expect"`
	} `json:"calls"`
}

// readCallPlan reads the plan and its page; call arguments hold the
// placeholders {{URL}} and {{URL2}}, filled by fill.
func readCallPlan(t *testing.T) (page string, fill func(url, url2 string) callPlan) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "test", "mcp-sdk", "calls.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p callPlan
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return p.Page, func(url, url2 string) callPlan {
		s := strings.ReplaceAll(strings.ReplaceAll(string(raw), "{{URL2}}", url2), "{{URL}}", url)
		var p callPlan
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// TestGoSDKConformance: the Go SDK's client, over `webcodex mcp` on stdio,
// lists the tools, every input schema resolves as JSON Schema 2020-12 (no
// boolean schemas), and each tool is called once with valid arguments on a
// local page: each answers structured content, a success where the plan
// says ok.
func TestGoSDKConformance(t *testing.T) {
	needChromium(t)
	page, fill := readCallPlan(t)
	srv := fixture(t, map[string]string{"/": page, "/2": "<title>second</title><p>second page</p>"})
	plan := fill(srv.URL+"/", srv.URL+"/2")
	uploads := t.TempDir()
	if err := os.WriteFile(filepath.Join(uploads, plan.UploadFile), []byte("conformance upload\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverOpts{args: []string{"--upload-dir", uploads}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		schemas[tool.Name] = resolveInputSchema(t, tool)
	}
	called := map[string]bool{}
	for _, c := range plan.Calls {
		rs := schemas[c.Tool]
		if rs == nil {
			t.Fatalf("the plan calls %s, which tools/list does not list", c.Tool)
		}
		if err := rs.Validate(c.Args); err != nil {
			t.Fatalf("%s: the plan's arguments do not fit the advertised schema: %v", c.Tool, err)
		}
		called[c.Tool] = true
		r := s.call(c.Tool, c.Args)
		checkPlanned(t, c.Tool, c.Expect, r)
	}
	for _, tool := range list.Tools {
		if !called[tool.Name] {
			r := s.call(tool.Name, map[string]any{}) // not planned: once, with no arguments
			t.Logf("%s (not in calls.json) answered: %s", tool.Name, capText(r.text, 200))
		}
	}
}

// resolveInputSchema checks one advertised input schema: an object schema
// whose every property schema is an object, resolvable as 2020-12.
func resolveInputSchema(t *testing.T, tool *sdk.Tool) *jsonschema.Resolved {
	t.Helper()
	b, err := json.Marshal(tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil || raw["type"] != "object" {
		t.Fatalf("%s: input schema is not an object schema: %s", tool.Name, b)
	}
	noBooleanSchemas(t, tool.Name, raw)
	var sc jsonschema.Schema
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatalf("%s: input schema: %v", tool.Name, err)
	}
	rs, err := sc.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: input schema does not resolve: %v", tool.Name, err)
	}
	return rs
}

// noBooleanSchemas fails on a property or items schema that is not an
// object: the TypeScript SDK refuses the whole tool list for one.
func noBooleanSchemas(t *testing.T, where string, s map[string]any) {
	t.Helper()
	if props, ok := s["properties"].(map[string]any); ok {
		for k, p := range props {
			pm, ok := p.(map[string]any)
			if !ok {
				t.Fatalf("%s.%s: schema %v is not an object", where, k, p)
			}
			noBooleanSchemas(t, where+"."+k, pm)
		}
	}
	if items, ok := s["items"]; ok {
		im, ok := items.(map[string]any)
		if !ok {
			t.Fatalf("%s[]: schema %v is not an object", where, items)
		}
		noBooleanSchemas(t, where+"[]", im)
	}
}

func checkPlanned(t *testing.T, tool, expect string, r result) {
	t.Helper()
	switch {
	case expect == "ok" && r.isError:
		t.Errorf("%s failed: %s", tool, r.text)
	case expect == "refusal" && (!r.isError || r.refusal() == nil):
		t.Errorf("%s: want a typed refusal, got %s", tool, r.text)
	case r.isError && r.refusal() == nil:
		t.Errorf("%s: an error that is no typed refusal: %s", tool, r.text)
	}
	if tool == "browser_take_screenshot" && !r.isError {
		if len(r.raw.Content) == 0 {
			t.Fatalf("%s: no content", tool)
		}
		if img, ok := r.raw.Content[0].(*sdk.ImageContent); !ok || len(img.Data) == 0 {
			t.Errorf("%s: the first content is not an image", tool)
		}
	}
}
