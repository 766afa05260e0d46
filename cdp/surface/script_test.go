package surface

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"testing"

	"github.com/webcodex/webcodex/fsm"
)

// TestScriptRefusalCodes: the refusal codes the page script returns (R in
// inject/00-base.js) are the project's own, exactly the set Go decodes, and
// each decodes to a refusal of its own code.
func TestScriptRefusalCodes(t *testing.T) {
	src, err := os.ReadFile("inject/00-base.js")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const R = Object\.freeze\(\{(.*?)\}\);`).FindSubmatch(src)
	if block == nil {
		t.Fatal("no R table in inject/00-base.js")
	}
	var js []string
	for _, m := range regexp.MustCompile(`\w+: '([a-z_]+)'`).FindAllSubmatch(block[1], -1) {
		js = append(js, string(m[1]))
	}
	var goCodes []string
	for _, c := range scriptCodes {
		goCodes = append(goCodes, string(c))
		if !c.Valid() {
			t.Errorf("%s is not a refusal code", c)
		}
		if err := (pageErr{Err: c}).refusal(); !fsm.IsCode(err, c) {
			t.Errorf("the page's %s decodes to %v", c, err)
		}
	}
	if len(js) == 0 {
		t.Fatal("no codes read from R")
	}
	sort.Strings(js)
	sort.Strings(goCodes)
	if !slices.Equal(js, goCodes) {
		t.Fatalf("page script codes %v, Go decodes %v", js, goCodes)
	}
	var pe pageErr
	if err := jsonUnmarshal([]byte(`{"err":"not_a_code"}`), &pe); err == nil {
		t.Fatal("an unknown code from the page decoded")
	}
}

// TestScriptEntryPoints: the entry points Go declares are exactly those
// the page script's dispatcher offers.
func TestScriptEntryPoints(t *testing.T) {
	api, err := os.ReadFile("inject/99-api.js")
	if err != nil {
		t.Fatal(err)
	}
	goSrc, err := os.ReadFile("script.go")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const ENTRY = Object\.freeze\(\{(.*?)\}\);`).FindSubmatch(api)
	if block == nil {
		t.Fatal("no ENTRY table in inject/99-api.js")
	}
	noComments := regexp.MustCompile(`//[^\n]*`).ReplaceAll(block[1], nil)
	var js []string
	for _, m := range regexp.MustCompile(`\w+`).FindAll(noComments, -1) {
		js = append(js, string(m))
	}
	var declared []string
	for _, m := range regexp.MustCompile(`\{name: "(\w+)"|jsTagFrame = "(\w+)"`).FindAllSubmatch(goSrc, -1) {
		declared = append(declared, string(m[1])+string(m[2]))
	}
	if len(js) < 10 {
		t.Fatalf("entry points not read: %v", js)
	}
	sort.Strings(js)
	sort.Strings(declared)
	if !slices.Equal(js, declared) {
		t.Fatalf("page script entry points %v, Go declares %v", js, declared)
	}
}
