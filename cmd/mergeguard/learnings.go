package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mergeguard/mergeguard/config"
	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/server/api"
	"github.com/mergeguard/mergeguard/server/store"
)

// runLearnings is `mergeguard learnings export --repo owner/name`.
func runLearnings(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("learnings", stderr)
	configPath := configFlag(fs)
	repoFlag := fs.String("repo", "", "the `repository` (owner/name) whose learnings to export")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) == 0:
		return usageError{fmt.Errorf("learnings: missing action (export)")}
	case rest[0] != "export":
		return usageError{fmt.Errorf("learnings: unknown action %q (want export)", rest[0])}
	case len(rest) > 1:
		return usageError{fmt.Errorf("learnings export: unexpected argument %q", rest[1])}
	}
	owner, name, _ := strings.Cut(*repoFlag, "/")
	repo, err := api.ParseRepoPath(owner, name)
	if *repoFlag == "" || err != nil {
		return usageError{fmt.Errorf("learnings export: --repo must be owner/name, got %q", *repoFlag)}
	}

	cfg, err := loadConfig(*configPath, getenv, config.RequireDatabase)
	if err != nil {
		return fmt.Errorf("learnings: %w", err)
	}
	st, err := store.Open(ctx, cfg.Database.URL.Value())
	if err != nil {
		return fmt.Errorf("learnings: %w", err)
	}
	defer st.Close()
	ls, err := st.Learnings(ctx, repo, review.LearningActive)
	if err != nil {
		return fmt.Errorf("learnings: %w", err)
	}
	out, err := exportLearnings(repo, ls)
	if err != nil {
		return fmt.Errorf("learnings: %w", err)
	}
	_, err = stdout.Write(out)
	return err
}

// exportLearnings renders learnings as a .mergeguard.yml fragment: a
// path_instructions entry each (path "**" for a learning without one),
// with a comment saying where it came from.
func exportLearnings(repo string, ls []review.Learning) ([]byte, error) {
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, l := range ls {
		text := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: l.Instruction}
		if strings.Contains(l.Instruction, "\n") {
			text.Style = yaml.LiteralStyle
		}
		entry := &yaml.Node{Kind: yaml.MappingNode, HeadComment: provenance(l), Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "path"},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: cmp.Or(l.Path, "**")},
			{Kind: yaml.ScalarNode, Value: "instructions"},
			text,
		}}
		list.Content = append(list.Content, entry)
	}
	if len(ls) == 0 {
		list.Style = yaml.FlowStyle
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{
		Kind: yaml.MappingNode,
		HeadComment: fmt.Sprintf("The active learnings of %s (%d), exported by MergeGuard:\n"+
			"path_instructions entries of .mergeguard.yml.", repo, len(ls)),
		Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "path_instructions"}, list},
	}}}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("export learnings of %s: %w", repo, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("export learnings of %s: %w", repo, err)
	}
	return b.Bytes(), nil
}

// provenance is the comment over an exported learning: its id, author and
// pull request, on one line.
func provenance(l review.Learning) string {
	s := fmt.Sprintf("learning #%d by %s", l.ID, l.Author)
	if l.PRNumber > 0 {
		s += fmt.Sprintf(", from pull request #%d", l.PRNumber)
	}
	return strings.Join(strings.Fields(s), " ")
}
