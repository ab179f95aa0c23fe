package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template/parse"
	"unicode"
)

// The catalogue test (ADR 0086): every Portuguese text the pages use has
// its English line, no English line is left over, and no template writes
// a word outside {{t}}. Texts are found where they are written: in Go as
// the literal argument of T, Tf or msg and as the values of the code
// tables (map[string]string literals); in templates as the literal
// argument of t.

// sameInBothLanguages are the words a template may write as they are:
// the product's name and the language switch's names, each in its own
// language.
var sameInBothLanguages = []string{"Lastro", "Português", "English"}

// goTexts are the Portuguese texts the package's Go files use, with
// where each is written.
func goTexts(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	add := func(lit ast.Expr) {
		b, ok := lit.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return
		}
		s, err := strconv.Unquote(b.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[s] = fset.Position(b.Pos()).String()
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				if len(x.Names) == 1 && x.Names[0].Name == "englishTexts" {
					return false // the translations, not texts
				}
			case *ast.CallExpr:
				name := ""
				switch fn := x.Fun.(type) {
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				case *ast.Ident:
					name = fn.Name
				}
				if (name == "T" || name == "Tf" || name == "msg") && len(x.Args) > 0 {
					add(x.Args[0])
				}
			case *ast.CompositeLit:
				if m, ok := x.Type.(*ast.MapType); ok && isIdent(m.Key, "string") && isIdent(m.Value, "string") {
					for _, e := range x.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok {
							add(kv.Value)
						}
					}
				}
			}
			return true
		})
	}
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// templateTexts are the literal arguments of t in every page's
// templates; bare is each template's text with every action a
// placeholder, to look for words written outside t.
func templateTexts(t *testing.T) (texts map[string]string, bare map[string]string) {
	t.Helper()
	pages, err := parsePages(portuguese)
	if err != nil {
		t.Fatal(err)
	}
	texts, bare = map[string]string{}, map[string]string{}
	for name, page := range pages {
		for _, tm := range page.Templates() {
			if tm.Tree == nil || tm.Tree.Root == nil {
				continue
			}
			where := "templates/" + name + ".html"
			if tm.Name() == "layout" {
				where = "templates/layout.html"
			}
			var b strings.Builder
			walkNode(tm.Tree.Root, &b, func(s string) { texts[s] = where })
			bare[where+" "+tm.Name()] = b.String()
		}
	}
	return texts, bare
}

func walkNode(n parse.Node, b *strings.Builder, found func(string)) {
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			walkNode(c, b, found)
		}
	case *parse.TextNode:
		b.Write(x.Text)
	case *parse.ActionNode:
		b.WriteString("\x00")
		walkPipe(x.Pipe, found)
	case *parse.IfNode:
		walkBranch(&x.BranchNode, b, found)
	case *parse.RangeNode:
		walkBranch(&x.BranchNode, b, found)
	case *parse.WithNode:
		walkBranch(&x.BranchNode, b, found)
	case *parse.TemplateNode:
		b.WriteString("\x00")
		walkPipe(x.Pipe, found)
	}
}

func walkBranch(x *parse.BranchNode, b *strings.Builder, found func(string)) {
	b.WriteString("\x00")
	walkPipe(x.Pipe, found)
	walkNode(x.List, b, found)
	walkNode(x.ElseList, b, found)
}

func walkPipe(p *parse.PipeNode, found func(string)) {
	if p == nil {
		return
	}
	for _, cmd := range p.Cmds {
		if len(cmd.Args) > 1 {
			if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok && id.Ident == "t" {
				if s, ok := cmd.Args[1].(*parse.StringNode); ok {
					found(s.Text)
				}
			}
		}
		for _, a := range cmd.Args {
			if sub, ok := a.(*parse.PipeNode); ok {
				walkPipe(sub, found)
			}
		}
	}
}

var (
	htmlTag      = regexp.MustCompile(`(?s)<[^>]*>`)
	wordedAttr   = regexp.MustCompile(`\b(alt|aria-label|title|placeholder)="([^"\x00]*)"`)
	formatVerb   = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)
	htmlEntities = regexp.MustCompile(`&[a-z]+;`)
)

func TestCatalogueIsComplete(t *testing.T) {
	t.Parallel()
	used := goTexts(t)
	tmpl, bare := templateTexts(t)
	for s, where := range tmpl {
		used[s] = where
	}
	if len(used) < 100 {
		t.Fatalf("found only %d texts: the search is broken", len(used))
	}
	var missing []string
	for s, where := range used {
		en, ok := englishTexts[s]
		switch {
		case !ok:
			missing = append(missing, strconv.Quote(s)+": \"\", // "+where)
		case strings.TrimSpace(en) == "":
			t.Errorf("%q (%s) has an empty English text", s, where)
		case !slices.Equal(formatVerb.FindAllString(s, -1), formatVerb.FindAllString(en, -1)):
			t.Errorf("%q and its English %q differ in their %% verbs", s, en)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("%d Portuguese texts have no English line in englishTexts (words_en.go):\n%s", len(missing), strings.Join(missing, "\n"))
	}
	for s := range englishTexts {
		if _, ok := used[s]; !ok {
			t.Errorf("englishTexts has %q, which no page uses: drop the line", s)
		}
	}
	// No word written beside t: a template's text outside tags and
	// actions, and the worded attributes, are all through t.
	for where, src := range bare {
		for _, m := range wordedAttr.FindAllStringSubmatch(src, -1) {
			if strings.IndexFunc(m[2], unicode.IsLetter) >= 0 {
				t.Errorf("%s: attribute %s written without t", where, m[0])
			}
		}
		text := htmlEntities.ReplaceAllString(htmlTag.ReplaceAllString(src, " "), " ")
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || r == 0 }) {
			if strings.IndexFunc(w, unicode.IsLetter) >= 0 && !slices.Contains(sameInBothLanguages, w) {
				t.Errorf("%s: %q written without t", where, w)
			}
		}
	}
}

// TestEnglishIsNotPortuguese: no English text keeps a Portuguese
// accented letter (ç, ã, é...): a sign of a line copied, not translated.
func TestEnglishIsNotPortuguese(t *testing.T) {
	t.Parallel()
	for pt, en := range englishTexts {
		if strings.ContainsFunc(en, func(r rune) bool { return unicode.IsLetter(r) && r > unicode.MaxASCII }) {
			t.Errorf("the English of %q is %q", pt, en)
		}
	}
}
