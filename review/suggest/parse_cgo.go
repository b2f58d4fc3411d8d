//go:build cgo

package suggest

import (
	"context"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// grammar returns the tree-sitter grammar of a language review/codectx
// parses (Go is parsed with go/parser), or nil.
func grammar(language string) *sitter.Language {
	switch language {
	case "python":
		return python.GetLanguage()
	case "javascript", "jsx":
		return javascript.GetLanguage()
	case "typescript":
		return typescript.GetLanguage()
	case "tsx":
		return tsx.GetLanguage()
	case "java":
		return java.GetLanguage()
	}
	return nil
}

// treeErrors counts the ERROR and MISSING nodes of src's tree-sitter tree;
// false when the language has no grammar here or parsing failed.
func treeErrors(ctx context.Context, language string, src []byte) (int, bool) {
	g := grammar(language)
	if g == nil {
		return 0, false
	}
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(g)
	tree, err := p.ParseCtx(ctx, nil, src)
	if err != nil {
		return 0, false
	}
	defer tree.Close()
	root := tree.RootNode()
	if !root.HasError() {
		return 0, true
	}
	cur := sitter.NewTreeCursor(root)
	defer cur.Close()
	n := 0
	for {
		node := cur.CurrentNode()
		if node.IsError() || node.IsMissing() {
			n++
		}
		if node.HasError() && !node.IsError() && cur.GoToFirstChild() {
			continue
		}
		for !cur.GoToNextSibling() {
			if !cur.GoToParent() {
				return n, true
			}
		}
	}
}
