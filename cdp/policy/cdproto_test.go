package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// protoCommand is one command as cdproto generates it: its method and the
// JSON names of its parameters (none for cdp.Empty).
type protoCommand struct {
	method string
	params map[string]string // JSON name → Go type, as written
}

var (
	protoOnce sync.Once
	protoCmds map[string]protoCommand
	protoErr  string
)

// cdprotoCommands reads every command of the cdproto module this build
// uses, from its source: in each domain package, every
//
//	var X = cdp.Command[XParams, XResult]{Method: CommandX}
//
// with CommandX's string and XParams' JSON field names. It fails the test
// when the generated shape changed (constants without a command value, or
// fewer commands than cdproto has ever had), so an upgrade cannot make the
// walk silently empty.
func cdprotoCommands(t *testing.T) map[string]protoCommand {
	t.Helper()
	protoOnce.Do(func() { protoCmds, protoErr = loadCdproto() })
	if protoErr != "" {
		t.Fatal(protoErr)
	}
	return protoCmds
}

func loadCdproto() (map[string]protoCommand, string) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/chromedp/cdproto").Output()
	if err != nil {
		return nil, "go list -m github.com/chromedp/cdproto: " + err.Error()
	}
	root := strings.TrimSpace(string(out))
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err.Error()
	}
	cmds := map[string]protoCommand{}
	consts := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "cdp" || strings.HasPrefix(e.Name(), ".") {
			continue // cdp holds the shared types and the Command type itself
		}
		n, found, msg := parseDomainPackage(filepath.Join(root, e.Name()))
		if msg != "" {
			return nil, e.Name() + ": " + msg
		}
		consts += n
		for m, c := range found {
			if _, dup := cmds[m]; dup {
				return nil, "command " + m + " generated twice"
			}
			cmds[m] = c
		}
	}
	if consts != len(cmds) {
		return nil, "cdproto has " + strconv.Itoa(consts) + " Command* constants but " + strconv.Itoa(len(cmds)) + " cdp.Command values: the generated shape changed; update cdproto_test.go"
	}
	if len(cmds) < 600 {
		return nil, "only " + strconv.Itoa(len(cmds)) + " commands found in cdproto; the walk is broken"
	}
	return cmds, ""
}

// parseDomainPackage returns how many Command* string constants a domain
// package declares and its commands by method.
func parseDomainPackage(dir string) (int, map[string]protoCommand, string) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, nil, err.Error()
	}
	constants := map[string]string{}        // CommandX → "Domain.x"
	structs := map[string]*ast.StructType{} // XParams → its fields
	type value struct{ params, method string }
	var values []value
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return 0, nil, err.Error()
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if st, ok := s.Type.(*ast.StructType); ok {
						structs[s.Name.Name] = st
					}
				case *ast.ValueSpec:
					for i, name := range s.Names {
						if i >= len(s.Values) {
							continue
						}
						// Command names are untyped; typed Command* constants
						// are enum values (browser.CommandID).
						if gd.Tok == token.CONST && s.Type == nil && strings.HasPrefix(name.Name, "Command") {
							if lit, ok := s.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								v, _ := strconv.Unquote(lit.Value)
								constants[name.Name] = v
							}
						}
						if gd.Tok == token.VAR {
							if v, ok := commandValue(s.Values[i]); ok {
								values = append(values, value{v[0], v[1]})
							}
						}
					}
				}
			}
		}
	}
	cmds := map[string]protoCommand{}
	for _, v := range values {
		method, ok := constants[v.method]
		if !ok {
			return 0, nil, "a command value names " + v.method + ", which is not a string constant"
		}
		c := protoCommand{method: method, params: map[string]string{}}
		if v.params != "" {
			st, ok := structs[v.params]
			if !ok {
				return 0, nil, method + ": its params type " + v.params + " is not a struct of the package"
			}
			for _, f := range st.Fields.List {
				if f.Tag == nil {
					continue
				}
				tag, _ := strconv.Unquote(f.Tag.Value)
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if name != "" && name != "-" {
					c.params[name] = exprString(f.Type)
				}
			}
		}
		cmds[method] = c
	}
	return len(constants), cmds, ""
}

// commandValue matches cdp.Command[P, R]{Method: CommandX} and returns P's
// name ("" for cdp.Empty) and CommandX.
func commandValue(e ast.Expr) ([2]string, bool) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return [2]string{}, false
	}
	idx, ok := lit.Type.(*ast.IndexListExpr)
	if !ok || exprString(idx.X) != "cdp.Command" || len(idx.Indices) != 2 || len(lit.Elts) != 1 {
		return [2]string{}, false
	}
	kv, ok := lit.Elts[0].(*ast.KeyValueExpr)
	if !ok || exprString(kv.Key) != "Method" {
		return [2]string{}, false
	}
	params := exprString(idx.Indices[0])
	if params == "cdp.Empty" {
		params = ""
	}
	return [2]string{params, exprString(kv.Value)}, true
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	case *ast.ArrayType:
		return "[]" + exprString(x.Elt)
	case *ast.MapType:
		return "map[" + exprString(x.Key) + "]" + exprString(x.Value)
	}
	return "?"
}
