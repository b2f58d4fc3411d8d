package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mergeguard/mergeguard/review"
	"github.com/mergeguard/mergeguard/review/memory"
	"github.com/mergeguard/mergeguard/review/task"
)

// The fakes of this file are in-memory role implementations in the manner
// of policy-bot's pulltest.Context: a value and an error field per call,
// and a record of what was written, so each case runs in microseconds.

// want is one thing a case must leave: what it is, what it is, what it
// should be.
type want struct {
	what      string
	got, want any
}

// checkAll reports each thing that is not as it should be.
func checkAll(t *testing.T, all ...want) {
	t.Helper()
	for _, w := range all {
		if diff := cmp.Diff(w.want, w.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", w.what, diff)
		}
	}
}

// posted is a comment the fake GitHub was asked to write: a reply in a
// thread (To is its first comment) or, To 0, a comment in the conversation.
type posted struct {
	To   int64
	Body string
}

// fakeGitHub is one pull request's repository on GitHub.
type fakeGitHub struct {
	ThreadsValue        []review.ReviewThread
	ThreadsError        error
	ResolveThreadError  error
	ThreadMessagesValue []review.ThreadMessage
	ThreadMessagesError error
	ReplyValue          int64
	ReplyError          error
	AnswerValue         int64
	AnswerError         error
	HeadValue           review.PullHead
	HeadError           error
	DescribeValue       bool
	DescribeError       error
	LoginValue          string
	CanWriteValue       map[string]bool
	CanWriteError       error
	ReactionsValue      map[int64][]review.Reaction
	ReactionsError      error
	CompareValue        review.Comparison
	CompareError        error
	SourceValue         review.Source
	DismissError        error
	PublishValue        review.Posted
	PublishError        error
	CreateCheckValue    int64
	CreateCheckError    error
	UpdateCheckError    error

	// What was asked and written.
	CanWriteCalls int
	// Undone are the heads whose change requests were dismissed.
	Undone    []string
	Resolved  []string
	Posted    []posted
	Described []review.Description
	Published []review.Post
	Created   []review.Check
	Updated   map[int64]review.Check
}

func (g *fakeGitHub) CreateCheck(_ context.Context, c review.Check) (int64, error) {
	if g.CreateCheckError != nil && !errors.Is(g.CreateCheckError, review.ErrAnnotationsRejected) {
		return 0, g.CreateCheckError
	}
	g.Created = append(g.Created, c)
	return g.CreateCheckValue, g.CreateCheckError
}

func (g *fakeGitHub) UpdateCheck(_ context.Context, id int64, c review.Check) error {
	if g.UpdateCheckError != nil {
		return g.UpdateCheckError
	}
	if g.Updated == nil {
		g.Updated = map[int64]review.Check{}
	}
	g.Updated[id] = c
	return nil
}

// CheckSummary renders the counts only: the markdown is package github's.
func (g *fakeGitHub) CheckSummary(ledger []review.LedgerEntry, blocking review.Severity, _ string) (string, string) {
	return "title", fmt.Sprintf("%d entries, blocking from %s", len(ledger), blocking)
}

func (g *fakeGitHub) Publish(_ context.Context, p review.Post) (review.Posted, error) {
	if g.PublishError != nil && !errors.Is(g.PublishError, review.ErrDismiss) {
		return review.Posted{}, g.PublishError
	}
	g.Published = append(g.Published, p)
	return g.PublishValue, g.PublishError
}

func (g *fakeGitHub) Source(int) review.Source { return g.SourceValue }

func (g *fakeGitHub) PullURL(number int) string {
	return fmt.Sprintf("https://github.com/o/r/pull/%d", number)
}

func (g *fakeGitHub) DismissChangeRequests(_ context.Context, _ int, head string) ([]int64, error) {
	if g.DismissError != nil {
		return nil, g.DismissError
	}
	g.Undone = append(g.Undone, head)
	return []int64{1}, nil
}

// fakeSource is a pull request's files: path at revision (review.Base or
// review.Head) to content.
type fakeSource struct {
	review.Source
	files  map[string]string
	change review.Change
}

func (s fakeSource) Change(context.Context) (review.Change, error) { return s.change, nil }

func (s fakeSource) ReadFile(_ context.Context, path string, rev review.Revision) ([]byte, error) {
	if f, ok := s.files[path+"@"+string(rev)]; ok {
		return []byte(f), nil
	}
	return nil, fmt.Errorf("%s at %s: %w", path, rev, review.ErrNotFound)
}

func (g *fakeGitHub) Login() string { return g.LoginValue }

func (g *fakeGitHub) CanWrite(_ context.Context, user string) (bool, error) {
	g.CanWriteCalls++
	return g.CanWriteValue[user], g.CanWriteError
}

func (g *fakeGitHub) Reactions(_ context.Context, commentID int64) ([]review.Reaction, error) {
	return g.ReactionsValue[commentID], g.ReactionsError
}

func (g *fakeGitHub) Compare(context.Context, string, string) (review.Comparison, error) {
	return g.CompareValue, g.CompareError
}

func (g *fakeGitHub) Head(context.Context, int) (review.PullHead, error) {
	return g.HeadValue, g.HeadError
}

func (g *fakeGitHub) Describe(_ context.Context, _ int, d review.Description) (bool, error) {
	if g.DescribeError != nil {
		return false, g.DescribeError
	}
	g.Described = append(g.Described, d)
	return g.DescribeValue, nil
}

func (g *fakeGitHub) Threads(context.Context, int) ([]review.ReviewThread, error) {
	return g.ThreadsValue, g.ThreadsError
}

func (g *fakeGitHub) ResolveThread(_ context.Context, id string) error {
	if g.ResolveThreadError != nil {
		return g.ResolveThreadError
	}
	g.Resolved = append(g.Resolved, id)
	return nil
}

func (g *fakeGitHub) ThreadMessages(context.Context, int, int64) ([]review.ThreadMessage, error) {
	return g.ThreadMessagesValue, g.ThreadMessagesError
}

func (g *fakeGitHub) Reply(_ context.Context, _ int, to int64, body string) (int64, error) {
	if g.ReplyError != nil {
		return 0, g.ReplyError
	}
	g.Posted = append(g.Posted, posted{To: to, Body: body})
	return g.ReplyValue, nil
}

func (g *fakeGitHub) Answer(_ context.Context, _ int, body string) (int64, error) {
	if g.AnswerError != nil {
		return 0, g.AnswerError
	}
	g.Posted = append(g.Posted, posted{Body: body})
	return g.AnswerValue, nil
}

// Comment posts on the conversation as Answer does.
func (g *fakeGitHub) Comment(ctx context.Context, number int, body string) (int64, error) {
	return g.Answer(ctx, number, body)
}

// fakeStore is the pull request's ledger and the repository's learnings.
type fakeStore struct {
	FindingOfThreadValue review.LedgerEntry
	FindingOfThreadError error
	AnswersInThreadValue int
	AnswersInThreadError error
	DismissFindingValue  bool
	DismissFindingError  error
	AddLearningError     error
	ReviewOfHeadValue    review.ReviewedHead
	ReviewOfHeadError    error
	LedgerValue          []review.LedgerEntry
	LedgerError          error
	ApplyThreadValue     bool
	ApplyThreadError     error
	RecordAgreementError error
	LastReviewValue      review.LastReview
	LastReviewError      error
	LearningsValue       []review.Learning
	LearningsError       error
	DismissalsValue      []memory.Dismissal
	DismissalsError      error
	RevivalsValue        []memory.Revival
	RevivalsError        error
	RecordSuppressError  error

	// What was written.
	Dismissed   []string // fingerprint by how
	Added       []review.Learning
	Applied     []review.ThreadChange
	Agreements  []string // fingerprint by login
	LedgerReads int
	// Limits are the limits the memory was read with; Suppressed what
	// was recorded as suppressed.
	Limits     []int
	Suppressed []memory.Suppressed
}

func (s *fakeStore) Dismissals(_ context.Context, _, _ string, limit int) ([]memory.Dismissal, error) {
	s.Limits = append(s.Limits, limit)
	return s.DismissalsValue, s.DismissalsError
}

func (s *fakeStore) Revivals(_ context.Context, _, _ string, limit int) ([]memory.Revival, error) {
	s.Limits = append(s.Limits, limit)
	return s.RevivalsValue, s.RevivalsError
}

func (s *fakeStore) RecordSuppressed(_ context.Context, _ string, _ int, _, _ string, sup []memory.Suppressed) error {
	if s.RecordSuppressError != nil {
		return s.RecordSuppressError
	}
	s.Suppressed = append(s.Suppressed, sup...)
	return nil
}

func (s *fakeStore) Ledger(context.Context, string, int) ([]review.LedgerEntry, error) {
	s.LedgerReads++
	return s.LedgerValue, s.LedgerError
}

func (s *fakeStore) ApplyThread(_ context.Context, _ string, _ int, t review.ThreadChange) (bool, error) {
	if s.ApplyThreadError != nil {
		return false, s.ApplyThreadError
	}
	s.Applied = append(s.Applied, t)
	return s.ApplyThreadValue, nil
}

func (s *fakeStore) RecordAgreement(_ context.Context, _ string, _ int, fingerprint, login string) error {
	if s.RecordAgreementError != nil {
		return s.RecordAgreementError
	}
	s.Agreements = append(s.Agreements, fingerprint+" by "+login)
	return nil
}

func (s *fakeStore) Learnings(context.Context, string, review.LearningStatus) ([]review.Learning, error) {
	return s.LearningsValue, s.LearningsError
}

func (s *fakeStore) LastReview(context.Context, string, int, string) (review.LastReview, error) {
	return s.LastReviewValue, s.LastReviewError
}

func (s *fakeStore) FindingOfThread(context.Context, string, int, int64) (review.LedgerEntry, error) {
	return s.FindingOfThreadValue, s.FindingOfThreadError
}

func (s *fakeStore) AnswersInThread(context.Context, string, int, int64, string) (int, error) {
	return s.AnswersInThreadValue, s.AnswersInThreadError
}

func (s *fakeStore) DismissFinding(_ context.Context, _ string, _ int, fingerprint, by, how string) (bool, error) {
	if s.DismissFindingError != nil {
		return false, s.DismissFindingError
	}
	if s.DismissFindingValue {
		s.Dismissed = append(s.Dismissed, fingerprint+" by "+by+" "+how)
	}
	return s.DismissFindingValue, nil
}

func (s *fakeStore) AddLearning(_ context.Context, l review.Learning) (review.Learning, error) {
	if s.AddLearningError != nil {
		return review.Learning{}, s.AddLearningError
	}
	l.ID = int64(len(s.Added) + 1)
	s.Added = append(s.Added, l)
	return l, nil
}

func (s *fakeStore) ReviewOfHead(context.Context, string, int, string) (review.ReviewedHead, error) {
	return s.ReviewOfHeadValue, s.ReviewOfHeadError
}

// fakeRunLog is the record of the run.
type fakeRunLog struct {
	ClaimPostValue bool
	ClaimPostError error
	SetHeadError   error
	SetCheckError  error
	Claims         int
	Heads          []review.PullHead
	Checks         []int64
}

func (r *fakeRunLog) SetCheck(_ context.Context, id int64) error {
	r.Checks = append(r.Checks, id)
	return r.SetCheckError
}

func (r *fakeRunLog) SetHead(_ context.Context, head review.PullHead) error {
	if r.SetHeadError != nil {
		return r.SetHeadError
	}
	r.Heads = append(r.Heads, head)
	return nil
}

func (r *fakeRunLog) ClaimPost(context.Context) (bool, error) {
	r.Claims++
	return r.ClaimPostValue, r.ClaimPostError
}

// fakeModel answers questions.
type fakeModel struct {
	AnswerValue *task.AnswerResult
	AnswerError error
	Requests    []task.AnswerRequest
}

func (m *fakeModel) Answer(_ context.Context, req task.AnswerRequest) (*task.AnswerResult, error) {
	m.Requests = append(m.Requests, req)
	return m.AnswerValue, m.AnswerError
}

// fakePipeline reviews: it reads the change first, as the pipeline does
// (so the run's head is checked and recorded), then gives RunValue.
type fakePipeline struct {
	RunValue *task.Result
	RunError error
	Requests []task.Request
}

func (p *fakePipeline) Run(ctx context.Context, req task.Request) (*task.Result, error) {
	p.Requests = append(p.Requests, req)
	if _, err := req.Source.Change(ctx); err != nil {
		return nil, err
	}
	return p.RunValue, p.RunError
}
