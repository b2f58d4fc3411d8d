package lint

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"mvdan.cc/sh/v3/syntax"

	"github.com/mergeguard/mergeguard/review"
)

// dockerRule is one Dockerfile best-practice rule beside BuildKit's
// checks. Most are hadolint's, under the ids people know (DL3006...);
// the two hadolint has no id for are MergeGuard's own (MGD...).
type dockerRule struct {
	id       string
	severity review.Severity
	category review.Category
	// conf is exact for a rule that reads the instruction itself,
	// heuristic for one that guesses intent (a download piped to a shell
	// may be a checked installer).
	conf  float64
	title string
	why   string
}

// helpURL is where a rule is explained.
func (r dockerRule) helpURL() string {
	if strings.HasPrefix(r.id, "DL") {
		return "https://github.com/hadolint/hadolint/wiki/" + r.id
	}
	return "https://docs.docker.com/build/building/best-practices/"
}

// The rules. Severities follow hadolint's (error and warning → warning,
// info → info), except DL3003, a matter of taste in most Dockerfiles
// (style: shown only with include_style); none is critical, so none
// blocks a merge by default.
var (
	ruleUntagged = dockerRule{"DL3006", review.SeverityWarning, review.CategoryBug, exact,
		"Always tag the version of an image explicitly",
		"An untagged base image is whatever `latest` is on the day of the build: builds stop being reproducible and can break without a change here."}
	ruleLatest = dockerRule{"DL3007", review.SeverityWarning, review.CategoryBug, exact,
		"Using latest is prone to errors if the image will ever update",
		"Pin the base image to a version tag (or a digest) so that a new upstream release does not change this image silently."}
	ruleAptYes = dockerRule{"DL3014", review.SeverityWarning, review.CategoryBug, exact,
		"Use the -y switch to avoid manual input `apt-get -y install <package>`",
		"Without -y, apt-get asks for confirmation, and a build has no one to answer: the build fails or hangs."}
	ruleAptRecommends = dockerRule{"DL3015", review.SeverityInfo, review.CategoryPerformance, exact,
		"Avoid additional packages by specifying `--no-install-recommends`",
		"apt-get installs recommended packages by default, which makes the image larger and widens its attack surface."}
	ruleAptLists = dockerRule{"DL3009", review.SeverityInfo, review.CategoryPerformance, exact,
		"Delete the apt-get lists after installing something",
		"The package lists stay in the image's layer unless the same RUN removes them (`rm -rf /var/lib/apt/lists/*`) or a cache mount holds them."}
	rulePipCache = dockerRule{"DL3042", review.SeverityInfo, review.CategoryPerformance, exact,
		"Avoid use of cache directory with pip. Use `pip install --no-cache-dir <package>`",
		"pip's download cache is kept in the image's layer; `--no-cache-dir` (or PIP_NO_CACHE_DIR, or a cache mount) keeps it out."}
	ruleSudo = dockerRule{"DL3004", review.SeverityWarning, review.CategoryBug, exact,
		"Do not use sudo as it leads to unpredictable behavior",
		"sudo has unpredictable TTY and signal-forwarding behaviour in a container and is rarely installed; use USER to change the user."}
	ruleCd = dockerRule{"DL3003", review.SeverityStyle, review.CategoryQuality, exact,
		"Use WORKDIR to switch to a directory",
		"A `cd` lasts for one RUN only; WORKDIR states the directory for every instruction that follows."}
	rulePipeShell = dockerRule{"MGD001", review.SeverityWarning, review.CategorySecurity, heuristic,
		"A download is piped into a shell",
		"The script runs as fetched, unchecked: whoever controls the URL (or the network, over http) runs code in the build. Download it, check its checksum or signature, then run it."}
	ruleAddURL = dockerRule{"MGD002", review.SeverityInfo, review.CategorySecurity, exact,
		"ADD fetches a URL",
		"ADD of a URL downloads at build time without a checksum unless --checksum is given; prefer `ADD --checksum=...` or a RUN that downloads and verifies."}
)

// dockerHit is a rule broken at a line of the Dockerfile.
type dockerHit struct {
	rule dockerRule
	line int
}

// bestPractices checks a Dockerfile against the rules above, without the
// rules ignored (by the repository's hadolint configuration) or turned
// off by the file's hadolint directives. It reports an error only when
// the file cannot be parsed at all (BuildKit's own check reports that).
func bestPractices(content []byte, ignored []string) ([]dockerHit, error) {
	res, err := parser.Parse(bytes.NewReader(content))
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	stages, _, err := instructions.Parse(res.AST, nil)
	if err != nil {
		return nil, fmt.Errorf("parse instructions: %w", err)
	}
	lines := strings.Split(string(content), "\n")
	var hits []dockerHit
	for i, s := range stages {
		hits = append(hits, checkFrom(s, stages[:i])...)
		last := i == len(stages)-1
		noPipCache := false
		for _, c := range s.Commands {
			switch c := c.(type) {
			case *instructions.EnvCommand:
				noPipCache = noPipCache || slices.ContainsFunc(c.Env, func(kv instructions.KeyValuePair) bool {
					return kv.Key == "PIP_NO_CACHE_DIR"
				})
			case *instructions.AddCommand:
				if slices.ContainsFunc(c.SourcePaths, isURL) && c.Checksum == "" {
					hits = append(hits, dockerHit{ruleAddURL, startLine(c.Location())})
				}
			case *instructions.RunCommand:
				hits = append(hits, checkRun(c, runContext{lines: lines, lastStage: last, noPipCache: noPipCache})...)
			}
		}
	}
	return suppress(hits, res.AST, ignored), nil
}

// suppress drops the hits of ignored rules and of rules a hadolint
// directive turns off: `# hadolint ignore=DL3006,DL3008` among the
// comments right above an instruction turns them off for it, `# hadolint
// global ignore=...` anywhere for the whole file.
func suppress(hits []dockerHit, ast *parser.Node, ignored []string) []dockerHit {
	off := map[int][]string{} // by instruction start line
	for _, n := range ast.Children {
		for _, c := range n.PrevComment {
			rest, ok := strings.CutPrefix(c, "hadolint ")
			if !ok {
				continue
			}
			if ids, global := strings.CutPrefix(rest, "global ignore="); global {
				ignored = append(ignored, splitIDs(ids)...)
			} else if ids, ok := strings.CutPrefix(rest, "ignore="); ok {
				off[n.StartLine] = append(off[n.StartLine], splitIDs(ids)...)
			}
		}
	}
	return slices.DeleteFunc(hits, func(h dockerHit) bool {
		if slices.Contains(ignored, h.rule.id) {
			return true
		}
		for _, n := range ast.Children {
			if n.StartLine <= h.line && h.line <= n.EndLine {
				return slices.Contains(off[n.StartLine], h.rule.id)
			}
		}
		return false
	})
}

// splitIDs splits a directive's comma-separated rule ids (a trailing
// comment after a space is not one).
func splitIDs(s string) []string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), " ")
	var ids []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// startLine is the first line of an instruction's location.
func startLine(loc []parser.Range) int {
	if len(loc) == 0 {
		return 0
	}
	return loc[0].Start.Line
}

// endLine is the last line of an instruction's location.
func endLine(loc []parser.Range) int {
	if len(loc) == 0 {
		return 0
	}
	return loc[len(loc)-1].End.Line
}

// checkFrom checks a stage's base image: a tag (or digest) other than
// latest. scratch, an earlier stage and an image named by a build
// argument are not images to tag here.
func checkFrom(s instructions.Stage, earlier []instructions.Stage) []dockerHit {
	ref := s.BaseName
	if ref == "" || strings.EqualFold(ref, "scratch") || strings.Contains(ref, "$") || strings.Contains(ref, "@") {
		return nil
	}
	if slices.ContainsFunc(earlier, func(e instructions.Stage) bool { return strings.EqualFold(e.Name, ref) }) {
		return nil
	}
	name := ref[strings.LastIndexByte(ref, '/')+1:] // a registry's port is before the last slash
	_, tag, tagged := strings.Cut(name, ":")
	line := startLine(s.Location)
	switch {
	case !tagged:
		return []dockerHit{{ruleUntagged, line}}
	case tag == "latest":
		return []dockerHit{{ruleLatest, line}}
	}
	return nil
}

// isURL reports whether an ADD source is fetched over the network.
func isURL(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

// runContext is what a RUN's checks need beyond the command.
type runContext struct {
	lines      []string // the Dockerfile's lines
	lastStage  bool     // the RUN is in the image's final stage
	noPipCache bool     // the stage set PIP_NO_CACHE_DIR
}

// checkRun checks the shell commands of one RUN: its command line (a
// shell-form line, or `sh -c` of the exec form) and its heredocs.
func checkRun(c *instructions.RunCommand, rc runContext) []dockerHit {
	loc := c.Location()
	start, end := startLine(loc), endLine(loc)
	var scripts []string
	switch {
	case c.PrependShell:
		scripts = append(scripts, strings.Join(c.CmdLine, " "))
	case len(c.CmdLine) >= 3 && isShell(c.CmdLine[0]) && c.CmdLine[1] == "-c":
		scripts = append(scripts, c.CmdLine[2])
	case len(c.CmdLine) > 0:
		scripts = append(scripts, shellQuote(c.CmdLine))
	}
	for _, f := range c.Files {
		scripts = append(scripts, f.Data)
	}
	code := c.String()
	run := runScan{cacheApt: cacheMount(code, "/var/lib/apt"), cachePip: cacheMount(code, "/.cache/pip")}
	for _, s := range scripts {
		f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
		if err != nil {
			continue // shellcheck and BuildKit say what is wrong with it
		}
		run.file(f)
	}
	at := func(c command) int { return lineWith(rc.lines, start, end, c.nth, c.words...) }
	var hits []dockerHit
	for _, h := range run.hits {
		hits = append(hits, dockerHit{h.rule, at(h.command)})
	}
	if run.aptInstall != nil && !run.aptListsRemoved && !run.cacheApt && rc.lastStage {
		hits = append(hits, dockerHit{ruleAptLists, at(*run.aptInstall)})
	}
	if !rc.noPipCache && !run.cachePip {
		for _, c := range run.pipNoCache {
			hits = append(hits, dockerHit{rulePipCache, at(c)})
		}
	}
	return hits
}

// command finds a command's line in a RUN: the nth (from 0) of the
// commands spelled with these words.
type command struct {
	words []string
	nth   int
}

// ruleAt is a rule broken by a command.
type ruleAt struct {
	rule dockerRule
	command
}

// runScan collects what the commands of one RUN do.
type runScan struct {
	cacheApt, cachePip bool // the RUN mounts a cache over apt's or pip's
	hits               []ruleAt
	aptInstall         *command // the first apt-get install
	aptListsRemoved    bool
	pipNoCache         []command // pip installs without --no-cache-dir
	seen               map[string]int
}

// command returns the next command spelled with words.
func (r *runScan) command(words ...string) command {
	if r.seen == nil {
		r.seen = map[string]int{}
	}
	key := strings.Join(words, " ")
	r.seen[key]++
	return command{words, r.seen[key] - 1}
}

// file checks every command of a parsed script, and every pipeline that
// feeds a download to a shell.
func (r *runScan) file(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && downloads(n.X) && runsShell(n.Y) {
				r.hits = append(r.hits, ruleAt{rulePipeShell, r.command("|")})
			}
		case *syntax.CallExpr:
			r.call(words(n))
		}
		return true
	})
}

// call checks one simple command.
func (r *runScan) call(args []string) {
	if len(args) == 0 {
		return
	}
	switch path0 := baseCmd(args[0]); path0 {
	case "sudo":
		r.hits = append(r.hits, ruleAt{ruleSudo, r.command("sudo")})
		r.call(withoutOptions(args[1:]))
	case "cd":
		r.hits = append(r.hits, ruleAt{ruleCd, r.command("cd")})
	case "apt-get":
		r.aptGet(args)
		// apt 2.7's dist-clean removes the package lists too.
		r.aptListsRemoved = r.aptListsRemoved || slices.Contains(args, "dist-clean")
	case "rm":
		r.aptListsRemoved = r.aptListsRemoved || slices.ContainsFunc(args[1:], func(a string) bool {
			return strings.HasPrefix(a, "/var/lib/apt/lists")
		})
	case "pip", "pip3", "python", "python3":
		if pipInstall(args) && !slices.Contains(args, "--no-cache-dir") {
			first := args[0] // pip, pip3, or python -m pip
			if c := baseCmd(first); c != "pip" && c != "pip3" {
				first = "pip"
			}
			r.pipNoCache = append(r.pipNoCache, r.command(first, "install"))
		}
	}
}

// aptGet checks an apt-get command: an install needs -y and
// --no-install-recommends.
func (r *runScan) aptGet(args []string) {
	if !slices.Contains(args, "install") {
		return
	}
	c := r.command("apt-get", "install")
	if r.aptInstall == nil {
		r.aptInstall = &c
	}
	yes, noRecommends := false, false
	for i, a := range args[1:] {
		switch {
		case a == "--yes" || a == "--assume-yes" || a == "-qq" || a == "-q=2" || a == "--quiet=2":
			yes = true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'y'):
			yes = true
		case a == "--no-install-recommends":
			noRecommends = true
		case a == "-o" && i+2 < len(args) && strings.EqualFold(args[i+2], "APT::Install-Recommends=false"),
			strings.EqualFold(strings.TrimPrefix(a, "-o"), "APT::Install-Recommends=false"):
			noRecommends = true
		}
	}
	if !yes {
		r.hits = append(r.hits, ruleAt{ruleAptYes, c})
	}
	if !noRecommends {
		r.hits = append(r.hits, ruleAt{ruleAptRecommends, c})
	}
}

// pipInstall reports whether args install with pip (`pip install`,
// `python -m pip install`).
func pipInstall(args []string) bool {
	if i := slices.Index(args, "-m"); i > 0 && i+1 < len(args) && args[i+1] == "pip" {
		args = args[i+1:]
	} else if c := baseCmd(args[0]); c != "pip" && c != "pip3" {
		return false
	}
	return len(args) > 1 && slices.Contains(args[1:], "install")
}

// withoutOptions drops sudo's own options (and their values) before the
// command it runs.
func withoutOptions(args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U":
			args = args[1:] // its value
		case "--":
			return args[1:]
		}
		if len(args) > 0 {
			args = args[1:]
		}
	}
	return args
}

// downloads reports whether a pipeline's left side fetches with curl or
// wget.
func downloads(c *syntax.Stmt) bool {
	found := false
	syntax.Walk(c, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			if w := words(call); len(w) > 0 && (baseCmd(w[0]) == "curl" || baseCmd(w[0]) == "wget") {
				found = true
			}
		}
		return !found
	})
	return found
}

// runsShell reports whether a pipeline's right side is a shell or a
// script interpreter (perhaps under sudo) reading the script from its
// input.
func runsShell(c *syntax.Stmt) bool {
	call, ok := c.Cmd.(*syntax.CallExpr)
	if !ok {
		return false
	}
	w := words(call)
	if len(w) > 0 && baseCmd(w[0]) == "sudo" {
		w = withoutOptions(w[1:])
	}
	if len(w) == 0 || slices.Contains(w[1:], "-c") {
		return false
	}
	switch c := baseCmd(w[0]); {
	case isShell(c):
		return true
	case c == "python" || c == "python3" || c == "perl" || c == "ruby" || c == "node":
		// The interpreter reads the program from its input.
		return len(w) == 1 || w[1] == "-"
	}
	return false
}

// isShell reports whether a command names a POSIX-family shell.
func isShell(cmd string) bool {
	switch baseCmd(cmd) {
	case "sh", "bash", "dash", "zsh", "ksh", "ash":
		return true
	}
	return false
}

// baseCmd is a command's name without its directory.
func baseCmd(cmd string) string { return cmd[strings.LastIndexByte(cmd, '/')+1:] }

// words returns a command's words, each the literal it spells when it is
// one (quotes removed) and "" otherwise.
func words(c *syntax.CallExpr) []string {
	out := make([]string, len(c.Args))
	for i, w := range c.Args {
		out[i] = literal(w)
	}
	return out
}

// literal is a word's value when it has no expansion in it.
func literal(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return ""
				}
				b.WriteString(l.Value)
			}
		default:
			return ""
		}
	}
	return b.String()
}

// shellQuote joins an exec-form command line into one shell line.
func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// cacheMount reports whether a RUN mounts a cache at a target containing
// dir.
func cacheMount(code, dir string) bool {
	for _, f := range strings.Fields(code) {
		if strings.HasPrefix(f, "--mount=") && strings.Contains(f, "type=cache") && strings.Contains(f, dir) {
			return true
		}
	}
	return false
}

// lineWith returns the line, from start to end (1-based), of the nth
// (from 0) command holding every word, and start when there is none: a
// finding is placed on the line of its command in a RUN continued over
// several lines.
func lineWith(lines []string, start, end, nth int, words ...string) int {
	for n := max(start, 1); n <= end && n <= len(lines); n++ {
		fields := strings.FieldsFunc(lines[n-1], func(r rune) bool {
			return unicode.IsSpace(r) || r == ';' || r == '(' || r == ')' || r == '&'
		})
		if slices.ContainsFunc(words, func(w string) bool { return !slices.Contains(fields, w) }) {
			continue
		}
		if nth == 0 {
			return n
		}
		nth--
	}
	return start
}
