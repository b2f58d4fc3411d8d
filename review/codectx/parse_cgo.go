//go:build cgo

package codectx

import (
	"context"
	"fmt"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// Available reports whether this build can parse files: it can, with cgo.
const Available = true

// language returns the tree-sitter grammar of a language, or nil.
func language(lang string) *sitter.Language {
	switch lang {
	case "go":
		return golang.GetLanguage()
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

// parse parses src as lang into a tree of named nodes.
func parse(ctx context.Context, lang string, src []byte) (*Node, error) {
	l := language(lang)
	if l == nil {
		return nil, fmt.Errorf("%w: %s", errLanguage, lang)
	}
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(l)
	tree, err := p.ParseCtx(ctx, nil, src)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	defer tree.Close()
	cur := sitter.NewTreeCursor(tree.RootNode())
	defer cur.Close()
	root := convert(cur.CurrentNode(), "", nil)
	copyChildren(cur, root)
	return root, nil
}

// copyChildren copies the named children of the cursor's node under
// parent, recursively.
func copyChildren(cur *sitter.TreeCursor, parent *Node) {
	if !cur.GoToFirstChild() {
		return
	}
	for {
		// Anonymous nodes (punctuation, keywords) are leaves: skipped.
		if n := cur.CurrentNode(); n.IsNamed() {
			child := convert(n, cur.CurrentFieldName(), parent)
			parent.Children = append(parent.Children, child)
			copyChildren(cur, child)
		}
		if !cur.GoToNextSibling() {
			break
		}
	}
	cur.GoToParent()
}

// convert copies one node.
func convert(n *sitter.Node, field string, parent *Node) *Node {
	end := int(n.EndPoint().Row) + 1
	if n.EndPoint().Column == 0 && n.EndPoint().Row > n.StartPoint().Row {
		end-- // a node ending with its newline ends on the line before
	}
	return &Node{Kind: n.Type(), Field: field, Start: int(n.StartPoint().Row) + 1, End: end,
		StartByte: int(n.StartByte()), EndByte: int(n.EndByte()), Parent: parent}
}

// SyntaxErrors counts the ERROR and MISSING nodes of src's tree-sitter
// tree (each a syntax error the parser recovered from); false when the
// language has no grammar here or parsing failed.
func SyntaxErrors(ctx context.Context, lang string, src []byte) (int, bool) {
	g := language(lang)
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
