package codectx

import "strings"

// words is a set of the space-separated names of s.
func words(s string) set { return setOf(strings.Fields(s)...) }

// pythonBuiltins are Python's builtin functions and types and the methods
// of str, list, dict, set and file objects.
var pythonBuiltins = words(`abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod
compile complex delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals
hasattr hash help hex id input int isinstance issubclass iter len list locals map max memoryview min next
object oct open ord pow print property range repr reversed round set setattr slice sorted staticmethod str
sum super tuple type vars zip Exception ValueError TypeError KeyError IndexError RuntimeError
append extend insert remove pop clear copy count index reverse sort keys values items get setdefault update
popitem fromkeys join split rsplit splitlines strip lstrip rstrip startswith endswith lower upper replace
find rfind encode decode add discard union intersection difference read readline readlines write close
seek tell flush`)

// jsBuiltins are JavaScript's global functions and objects and the
// methods of Array, Object, String, Map, Set, Promise and JSON.
var jsBuiltins = words(`Array Object String Number Boolean Symbol Map Set WeakMap WeakSet Promise Error
TypeError RangeError Date RegExp JSON Math parseInt parseFloat isNaN isFinite require console setTimeout
clearTimeout setInterval clearInterval fetch Record Partial Readonly Pick Omit
push pop shift unshift slice splice concat join reverse sort indexOf lastIndexOf includes find findIndex
filter map reduce reduceRight forEach some every flat flatMap fill keys values entries from isArray of
toString toLocaleString valueOf hasOwnProperty assign freeze create defineProperty getPrototypeOf
charAt charCodeAt split substring substr trim trimStart trimEnd toLowerCase toUpperCase startsWith
endsWith padStart padEnd replace replaceAll match matchAll repeat get set has delete clear add then
catch finally resolve reject all allSettled race stringify parse apply call bind log warn error info debug`)

// javaBuiltins are java.lang's classes and the methods of Object, String
// and the collections.
var javaBuiltins = words(`Object String Integer Long Double Float Boolean Character Byte Short Math System
StringBuilder Exception RuntimeException IllegalArgumentException IllegalStateException List ArrayList Map
HashMap Set HashSet Optional Collections Arrays Objects
toString equals hashCode getClass valueOf length charAt substring indexOf isEmpty trim split format
append add addAll remove get put set contains containsKey size clear stream iterator forEach of
println print printf`)
