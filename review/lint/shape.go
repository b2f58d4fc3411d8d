package lint

import (
	"go/ast"
	"go/token"
	"go/types"
	"maps"
)

// wellShaped returns a copy of info for the printf pass, in which the
// expressions go/types left untyped (it records no invalid operand: a call
// of a third-party function, a literal of a third-party type) have the
// invalid type in the shape well-typed code has there: a tuple in a
// multi-value context, a function for a function literal or a builtin
// called, a slice for a composite literal. printf finds the types that implement its wrapper
// interfaces with x/tools' refactor/satisfy, which requires well-typed
// code and panics on the missing types; an invalid type makes it skip the
// expression instead. The other passes keep info as go/types made it.
func wellShaped(files []*ast.File, info *types.Info) *types.Info {
	shaped := *info
	shaped.Types, shaped.Scopes, shaped.FileVersions = maps.Clone(info.Types), maps.Clone(info.Scopes), maps.Clone(info.FileVersions)
	s := shaper{types: shaped.Types, uses: info.Uses, defs: info.Defs}
	for _, f := range files {
		ast.Walk(&s, f)
	}
	return &shaped
}

// shaper fills the missing types of the expressions it visits, knowing
// the number of results of the function it is in.
type shaper struct {
	types   map[ast.Expr]types.TypeAndValue
	uses    map[*ast.Ident]types.Object
	defs    map[*ast.Ident]types.Object
	results []int // of the enclosing functions, innermost last
}

// Visit implements ast.Visitor.
func (s *shaper) Visit(n ast.Node) ast.Visitor {
	switch n := n.(type) {
	case nil:
		return nil
	case *ast.FuncDecl:
		if n.Body != nil {
			inner := &shaper{types: s.types, uses: s.uses, defs: s.defs, results: append(s.results[:len(s.results):len(s.results)], n.Type.Results.NumFields())}
			ast.Walk(inner, n.Body)
		}
		return nil
	case *ast.FuncLit:
		if _, ok := s.types[n]; !ok {
			s.types[n] = types.TypeAndValue{Type: types.NewSignatureType(nil, nil, nil, nil, nil, false)}
		}
		inner := &shaper{types: s.types, uses: s.uses, defs: s.defs, results: append(s.results[:len(s.results):len(s.results)], n.Type.Results.NumFields())}
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
	case *ast.CallExpr:
		s.builtin(n)
		if _, ok := s.types[n]; !ok {
			s.types[n] = types.TypeAndValue{Type: types.Typ[types.Invalid]}
		}
	case *ast.CompositeLit:
		if !literalType(s.types[n].Type) {
			s.types[n] = types.TypeAndValue{Type: types.NewSlice(types.Typ[types.Invalid])}
		}
	case *ast.Ident:
		s.ident(n)
	case *ast.SelectorExpr:
		if _, ok := s.types[n]; !ok {
			s.types[n] = types.TypeAndValue{Type: types.Typ[types.Invalid]}
		}
		ast.Walk(s, n.X) // not n.Sel: a field or method name is no operand
		return nil
	case *ast.KeyValueExpr:
		if _, ok := n.Key.(*ast.Ident); !ok { // a field name is no operand
			ast.Walk(s, n.Key)
		}
		ast.Walk(s, n.Value)
		return nil
	case *ast.ArrayType, *ast.StructType, *ast.FuncType, *ast.InterfaceType, *ast.MapType, *ast.ChanType:
	case ast.Expr:
		if _, ok := s.types[n]; !ok {
			s.types[n] = types.TypeAndValue{Type: types.Typ[types.Invalid]}
		}
	}
	return s
}

// ident gives an operand go/types left untyped (a variable of an untyped
// import's type) the invalid type: printf asks the type of each argument.
// A declared name, a package, a type, a function or a label is no such
// operand.
func (s *shaper) ident(id *ast.Ident) {
	if _, ok := s.types[id]; ok || id.Name == "_" {
		return
	}
	if _, ok := s.defs[id]; ok {
		return
	}
	switch s.uses[id].(type) {
	case *types.Var, *types.Const, nil:
		s.types[id] = types.TypeAndValue{Type: types.Typ[types.Invalid]}
	}
}

// builtin gives the function of a call of a builtin that go/types left
// untyped (its arguments are) a variadic signature that takes the call's
// arguments: refactor/satisfy asserts that it has one.
func (s *shaper) builtin(call *ast.CallExpr) {
	var id *ast.Ident
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = fun
	case *ast.SelectorExpr:
		id = fun.Sel
	default:
		return
	}
	if _, ok := s.uses[id].(*types.Builtin); !ok {
		return
	}
	if _, ok := s.types[id].Type.(*types.Signature); ok {
		return
	}
	vars := make([]*types.Var, max(len(call.Args), 1))
	for i := range vars {
		vars[i] = types.NewParam(token.NoPos, nil, "", types.Typ[types.Invalid])
	}
	vars[len(vars)-1] = types.NewParam(token.NoPos, nil, "", types.NewSlice(types.Typ[types.Invalid]))
	sig := types.TypeAndValue{Type: types.NewSignatureType(nil, nil, nil, types.NewTuple(vars...), nil, true)}
	s.types[id] = sig
	if call.Fun != id {
		s.types[call.Fun] = sig
	}
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
