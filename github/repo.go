package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	gh "github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/shurcooL/githubv4"

	"github.com/mergeguard/mergeguard/review"
)

// Installations opens the repositories of the App's installations: the one
// place where installation clients are made and "owner/name" is split. It
// knows the App's bot login, learned once at start, so that every "is this
// ours" question has the same answer. It is safe for concurrent use.
type Installations struct {
	cc        githubapp.ClientCreator
	login     string
	webURL    string
	publisher *Publisher
	descKey   []byte
}

// NewInstallations asks GitHub who the App is (GET /app, with the App's
// JWT) to learn its bot login, "<slug>[bot]", and returns the installations
// of the App cc makes clients for. webURL is GitHub's web address
// ("https://github.com/"), for links to pull requests; opts configures the
// publisher of every repository, its BotLogin set here.
//
// GitHub API docs: https://docs.github.com/rest/apps/apps#get-the-authenticated-app
func NewInstallations(ctx context.Context, cc githubapp.ClientCreator, webURL string, opts PublisherOptions) (*Installations, error) {
	client, err := cc.NewAppClient()
	if err != nil {
		return nil, fmt.Errorf("github app client: %w", err)
	}
	app, _, err := client.Apps.Get(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("learn the App's login (GET /app): %w", apiError(err))
	}
	if app.GetSlug() == "" {
		return nil, errors.New("learn the App's login (GET /app): GitHub answered no slug")
	}
	opts.BotLogin = app.GetSlug() + "[bot]"
	if webURL == "" {
		webURL = DefaultWebURL
	}
	return &Installations{cc: cc, login: opts.BotLogin, webURL: strings.TrimRight(webURL, "/") + "/", publisher: NewPublisher(opts),
		descKey: opts.DescriptionKey}, nil
}

// Login is the App's bot account, "<slug>[bot]": the author of everything
// MergeGuard posts.
func (i *Installations) Login() string { return i.login }

// Repo returns the handle of one repository, "owner/name", through the
// installation's client. Clients are cached by installation (go-githubapp's
// caching creator), so a handle is cheap; make one per job.
func (i *Installations) Repo(installationID int64, fullName string) (*Repo, error) {
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("repository %q is not owner/name", fullName)
	}
	client, err := i.cc.NewInstallationClient(installationID)
	if err != nil {
		return nil, fmt.Errorf("installation %d client: %w", installationID, err)
	}
	v4, err := i.cc.NewInstallationV4Client(installationID)
	if err != nil {
		return nil, fmt.Errorf("installation %d graphql client: %w", installationID, err)
	}
	return &Repo{owner: owner, name: name, client: client, v4: v4, publisher: i.publisher, login: i.login, webURL: i.webURL, descKey: i.descKey,
		sources: map[int]*Source{}}, nil
}

// Repo is one repository as one installation of the App sees it: what the
// webhook intake, the workers and the API need from GitHub, and nothing of
// go-github's types.
type Repo struct {
	owner, name string
	client      *gh.Client
	v4          *githubv4.Client
	publisher   *Publisher
	login       string
	webURL      string // GitHub's web address, with a trailing slash
	descKey     []byte // signs the description's markers (Describe)

	mu      sync.Mutex
	sources map[int]*Source // by pull request number: Publish asks them what GitHub hid
}

// FullName is "owner/name".
func (r *Repo) FullName() string { return r.owner + "/" + r.name }

// PullURL is the web address of pull request number.
func (r *Repo) PullURL(number int) string {
	return fmt.Sprintf("%s%s/%s/pull/%d", r.webURL, r.owner, r.name, number)
}

// Login is the App's bot account.
func (r *Repo) Login() string { return r.login }

// Source is the review.Source of pull request number: its change, diff and
// files, read through the installation.
func (r *Repo) Source(number int) review.Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.sources[number]; ok {
		return s
	}
	s := NewSource(r.client, r.v4, r.owner, r.name, number, SourceOptions{})
	r.sources[number] = s
	return s
}

// Head returns where pull request number stands now. Workers read it just
// before posting (a review of an older head is stale); commands read it to
// name the head they ask to review. A pull request that does not exist is
// review.ErrNotFound.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#get-a-pull-request
func (r *Repo) Head(ctx context.Context, number int) (review.PullHead, error) {
	pr, _, err := r.client.PullRequests.Get(ctx, r.owner, r.name, number)
	if err != nil {
		return review.PullHead{}, fmt.Errorf("get head of %s#%d: %w", r.FullName(), number, apiError(err))
	}
	return review.PullHead{SHA: pr.GetHead().GetSHA(), BaseSHA: pr.GetBase().GetSHA(), Branch: pr.GetHead().GetRef()}, nil
}

// Publish posts the review of one run on pull request post.Number (see
// Publisher.Publish).
func (r *Repo) Publish(ctx context.Context, post review.Post) (review.Posted, error) {
	r.mu.Lock()
	src := r.sources[post.Number]
	r.mu.Unlock()
	if hidden := src.hiddenFiles(); len(hidden) > 0 && post.Index != nil {
		post.Index = bodyOnly{LineIndex: post.Index, paths: hidden}
	}
	posted, err := r.publisher.Publish(ctx, r.client, addressed{Post: post, Owner: r.owner, Repo: r.name, PullURL: r.PullURL(post.Number)})
	return posted.Posted, err
}

// DismissChangeRequests dismisses the bot's REQUEST_CHANGES reviews on
// pull request number, whose head is head, when nothing blocks it any more
// (see Publisher.DismissChangeRequests).
func (r *Repo) DismissChangeRequests(ctx context.Context, number int, head string) ([]int64, error) {
	return r.publisher.DismissChangeRequests(ctx, r.client, addressed{Owner: r.owner, Repo: r.name, Post: review.Post{Number: number, HeadSHA: head}})
}

// Comment posts a comment on pull request number's conversation (failure
// notices, command replies) and returns its id. A body above GitHub's limit
// is cut.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#create-an-issue-comment
func (r *Repo) Comment(ctx context.Context, number int, body string) (int64, error) {
	return comment(ctx, r.client, r.owner, r.name, number, body)
}

// React adds a reaction to a comment on a pull request's conversation.
// Reacting twice the same way is not an error.
func (r *Repo) React(ctx context.Context, commentID int64, content string) error {
	return react(ctx, r.client, r.owner, r.name, commentID, content)
}

// CanWrite reports whether user may steer MergeGuard on this repository:
// admin, maintain and write access do. A user GitHub does not know as a
// collaborator may not.
func (r *Repo) CanWrite(ctx context.Context, user string) (bool, error) {
	level, err := permission(ctx, r.client, r.owner, r.name, user)
	if err != nil {
		return false, err
	}
	return CanWrite(level), nil
}
