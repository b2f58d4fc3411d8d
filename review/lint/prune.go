package lint

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/refactor/satisfy"
)

// pruned returns files for the printf pass without the declarations and
// statements on which refactor/satisfy (which printf runs over the whole
// package) panics, even once info is shaped (see wellShaped): partly typed
// code it cannot walk, such as a comparison with a value of no type. A
// compound statement keeps what of its blocks it can walk. Files with
// nothing to drop are returned as they are; the others are shallow copies
// that share the rest of their syntax (and so their positions and types),
// recorded in info's per-file maps.
func pruned(files []*ast.File, info *types.Info) []*ast.File {
	out := make([]*ast.File, len(files))
	for i, f := range files {
		out[i] = f
		if !panics(info, f.Decls...) {
			continue
		}
		cp := *f
		cp.Decls = nil
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && panics(info, fd) {
				fcp := *fd
				fcp.Body = pruneBlock(info, fd, fd.Body)
				d = &fcp
			}
			if !panics(info, d) {
				cp.Decls = append(cp.Decls, d)
			}
		}
		info.FileVersions[&cp] = info.FileVersions[f]
		info.Scopes[&cp] = info.Scopes[f]
		out[i] = &cp
	}
	return out
}

// panics reports whether satisfy.Finder panics on decls.
func panics(info *types.Info, decls ...ast.Decl) (failed bool) {
	defer func() {
		if recover() != nil {
			failed = true
		}
	}()
	var f satisfy.Finder
	f.Find(info, []*ast.File{{Name: &ast.Ident{Name: "p"}, Decls: decls}})
	return false
}

// pruneBlock returns a copy of b, a block of fd, without the statements
// Finder panics on, after pruning their own blocks.
func pruneBlock(info *types.Info, fd *ast.FuncDecl, b *ast.BlockStmt) *ast.BlockStmt {
	cp := *b
	cp.List = nil
	for _, s := range b.List {
		if stmtPanics(info, fd, s) {
			s = pruneStmt(info, fd, s)
		}
		if s != nil && !stmtPanics(info, fd, s) {
			cp.List = append(cp.List, s)
		}
	}
	return &cp
}

// pruneStmt returns a copy of the compound statement s with its blocks
// pruned, or s when it has none.
func pruneStmt(info *types.Info, fd *ast.FuncDecl, s ast.Stmt) ast.Stmt {
	switch s := s.(type) {
	case *ast.BlockStmt:
		return pruneBlock(info, fd, s)
	case *ast.IfStmt:
		cp := *s
		cp.Body = pruneBlock(info, fd, s.Body)
		if s.Else != nil {
			cp.Else = pruneStmt(info, fd, s.Else)
		}
		return &cp
	case *ast.ForStmt:
		cp := *s
		cp.Body = pruneBlock(info, fd, s.Body)
		return &cp
	case *ast.RangeStmt:
		cp := *s
		cp.Body = pruneBlock(info, fd, s.Body)
		return &cp
	case *ast.LabeledStmt:
		cp := *s
		cp.Stmt = pruneStmt(info, fd, s.Stmt)
		return &cp
	case *ast.CaseClause:
		cp := *s
		cp.Body = pruneBlock(info, fd, &ast.BlockStmt{List: s.Body}).List
		return &cp
	case *ast.CommClause:
		cp := *s
		cp.Body = pruneBlock(info, fd, &ast.BlockStmt{List: s.Body}).List
		return &cp
	case *ast.SwitchStmt:
		cp := *s
		cp.Body = pruneClauses(info, fd, s.Body)
		return &cp
	case *ast.TypeSwitchStmt:
		cp := *s
		cp.Body = pruneClauses(info, fd, s.Body)
		return &cp
	case *ast.SelectStmt:
		cp := *s
		cp.Body = pruneClauses(info, fd, s.Body)
		return &cp
	}
	return s
}

// pruneClauses returns a copy of the body of a switch or select with each
// clause's statements pruned.
func pruneClauses(info *types.Info, fd *ast.FuncDecl, b *ast.BlockStmt) *ast.BlockStmt {
	cp := *b
	cp.List = make([]ast.Stmt, len(b.List))
	for i, c := range b.List {
		cp.List[i] = pruneStmt(info, fd, c)
	}
	return &cp
}

// stmtPanics reports whether Finder panics on s alone in fd.
func stmtPanics(info *types.Info, fd *ast.FuncDecl, s ast.Stmt) bool {
	one := *fd
	one.Body = &ast.BlockStmt{List: []ast.Stmt{s}}
	return panics(info, &one)
}
