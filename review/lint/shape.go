package lint

import (
	"go/ast"
	"go/token"
	"go/types"
)

// wellShaped returns a copy of info for the printf pass, in which the
// expressions go/types left untyped (it records no invalid operand: a call
// of a third-party function, a literal of a third-party type) have the
// invalid type in the shape well-typed code has there: a tuple in a
// multi-value context, a function for a function literal, a slice for a
// composite literal. printf finds the types that implement its wrapper
// interfaces with x/tools' refactor/satisfy, which requires well-typed
// code and panics on the missing types; an invalid type makes it skip the
// expression instead. The other passes keep info as go/types made it.
func wellShaped(files []*ast.File, info *types.Info) *types.Info {
	shaped := *info
	shaped.Types = make(map[ast.Expr]types.TypeAndValue, len(info.Types))
	for e, tv := range info.Types {
		shaped.Types[e] = tv
	}
	s := shaper{types: shaped.Types}
	for _, f := range files {
		ast.Walk(&s, f)
	}
	return &shaped
}

// shaper fills the missing types of the expressions it visits, knowing
// the number of results of the function it is in.
type shaper struct {
	types   map[ast.Expr]types.TypeAndValue
	results []int // of the enclosing functions, innermost last
}

// Visit implements ast.Visitor.
func (s *shaper) Visit(n ast.Node) ast.Visitor {
	switch n := n.(type) {
	case nil:
		return nil
	case *ast.FuncDecl:
		if n.Body != nil {
			inner := &shaper{types: s.types, results: append(s.results[:len(s.results):len(s.results)], n.Type.Results.NumFields())}
			ast.Walk(inner, n.Body)
		}
		return nil
	case *ast.FuncLit:
		if _, ok := s.types[n]; !ok {
			s.types[n] = types.TypeAndValue{Type: types.NewSignatureType(nil, nil, nil, nil, nil, false)}
		}
		inner := &shaper{types: s.types, results: append(s.results[:len(s.results):len(s.results)], n.Type.Results.NumFields())}
		ast.Walk(inner, n.Body)
		return nil
	case *ast.AssignStmt:
		if len(n.Lhs) > 1 && len(n.Rhs) == 1 {
			s.tuple(n.Rhs[0], len(n.Lhs))
		}
	case *ast.ValueSpec:
		if len(n.Names) > 1 && len(n.Values) == 1 {
			s.tuple(n.Values[0], len(n.Names))
		}
	case *ast.ReturnStmt:
		if k := len(s.results); k > 0 && s.results[k-1] > 1 && len(n.Results) == 1 {
			s.tuple(n.Results[0], s.results[k-1])
		}
	case *ast.CompositeLit:
		if !literalType(s.types[n].Type) {
			s.types[n] = types.TypeAndValue{Type: types.NewSlice(types.Typ[types.Invalid])}
		}
	case *ast.Ident, *ast.ArrayType, *ast.StructType, *ast.FuncType, *ast.InterfaceType, *ast.MapType, *ast.ChanType:
	case ast.Expr:
		if _, ok := s.types[n]; !ok {
			s.types[n] = types.TypeAndValue{Type: types.Typ[types.Invalid]}
		}
	}
	return s
}

// tuple gives the untyped expression e in a multi-value context a tuple
// of n invalid values (and the same to what it parenthesizes).
func (s *shaper) tuple(e ast.Expr, n int) {
	for {
		if tv, ok := s.types[e]; ok && tv.Type != nil {
			if _, isTuple := tv.Type.(*types.Tuple); isTuple {
				return
			}
		}
		vars := make([]*types.Var, n)
		for i := range vars {
			vars[i] = types.NewVar(token.NoPos, nil, "", types.Typ[types.Invalid])
		}
		s.types[e] = types.TypeAndValue{Type: types.NewTuple(vars...)}
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return
		}
		e = p.X
	}
}

// literalType reports whether t is a type refactor/satisfy expects of a
// composite literal: a struct, map, slice or array, or a type parameter.
func literalType(t types.Type) bool {
	if t == nil {
		return false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	switch t.Underlying().(type) {
	case *types.Struct, *types.Map, *types.Slice, *types.Array:
		return true
	}
	_, ok := t.(*types.TypeParam)
	return ok
}
