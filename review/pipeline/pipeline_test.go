package pipeline

import (
	"encoding/json"
	"testing"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
)

func TestRunAnalyzersOnlySmoke(t *testing.T) {
	src := &memSource{change: review.Change{Title: "Add uploader"}, diff: readTestdata(t, "planted.diff"), head: plantedHead()}
	p := New(Deps{})
	res, err := p.Run(t.Context(), Request{Source: src, Repo: config.DefaultRepo()})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(res.Verdict, "", "  ")
	t.Logf("%s", b)
}
