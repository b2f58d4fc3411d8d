package budget

import "math"

// vocab is an encoding's vocabulary arranged for the byte-pair merge's
// look-ups, which take most of the counting time: the two-byte tokens in a
// table indexed by their bytes, the tokens of up to 7 bytes (most
// look-ups) in an open-addressing table of packed keys, one memory access
// a look-up where Go's map of strings needs several, and the longer ones
// in a map.
type vocab struct {
	pairs [1 << 16]int32 // ranks of the two-byte tokens by their bytes, or noRank
	keys  []uint64       // packed tokens of at most shortBytes bytes; 0 is an empty slot
	ranks []int32        // the rank of keys[i]
	shift uint           // 64 - log2(len(keys))
	long  map[string]int // tokens longer than shortBytes
}

// shortBytes is the longest token packed into a key: its bytes and, in the
// top byte, its length, so that no two tokens share a key and no key is 0.
const shortBytes = 7

// noRank marks bytes that are not a token.
const noRank = int32(math.MaxInt32)

// newVocab arranges the ranks of a vocabulary.
func newVocab(ranks map[string]int) *vocab {
	v := &vocab{long: map[string]int{}}
	for i := range v.pairs {
		v.pairs[i] = noRank
	}
	short := 0
	for token := range ranks {
		if len(token) <= shortBytes {
			short++
		}
	}
	size := 1
	for size < 2*short+2 { // at most half full
		size *= 2
	}
	v.keys, v.ranks = make([]uint64, size), make([]int32, size)
	for v.shift = 64; 1<<(64-v.shift) < size; v.shift-- {
	}
	for token, rank := range ranks {
		if rank < 0 || rank >= math.MaxInt32 { // ranks are < 200,000
			continue
		}
		r := int32(rank)
		if len(token) == 2 {
			v.pairs[int(token[0])<<8|int(token[1])] = r
		}
		if len(token) > shortBytes {
			v.long[token] = rank
			continue
		}
		k := pack([]byte(token))
		i := v.slot(k)
		for v.keys[i] != 0 {
			i = (i + 1) & (len(v.keys) - 1)
		}
		v.keys[i], v.ranks[i] = k, r
	}
	return v
}

// pack makes the key of a token of at most shortBytes bytes.
func pack(b []byte) uint64 {
	k := uint64(len(b)) << 56
	for i, c := range b {
		k |= uint64(c) << (8 * i)
	}
	return k
}

// slot is where the search for key k starts (Fibonacci hashing).
func (v *vocab) slot(k uint64) int {
	return int((k * 0x9E3779B97F4A7C15) >> v.shift) //nolint:gosec // below len(keys)
}

// rank returns the rank of the token b, or noRank when b is not a token.
func (v *vocab) rank(b []byte) int32 {
	switch {
	case len(b) == 0:
		return noRank // its key, 0, marks the empty slots
	case len(b) == 2:
		return v.pairs[int(b[0])<<8|int(b[1])]
	case len(b) > shortBytes:
		if r, ok := v.long[string(b)]; ok {
			return int32(r) //nolint:gosec // checked by newVocab
		}
		return noRank
	}
	k := pack(b)
	for i := v.slot(k); ; i = (i + 1) & (len(v.keys) - 1) {
		switch v.keys[i] {
		case k:
			return v.ranks[i]
		case 0:
			return noRank
		}
	}
}
