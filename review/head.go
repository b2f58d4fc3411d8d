package review

// PullHead is where a pull request stands: the commit it proposes, the base
// commit it is compared with, and its head branch. It is MergeGuard's one
// pull request head type: the webhook intake, the workers, the API and the
// store all speak it.
type PullHead struct {
	SHA     string
	BaseSHA string
	Branch  string
}

// PullHead returns where the change stands.
func (c Change) PullHead() PullHead {
	return PullHead{SHA: c.HeadSHA, BaseSHA: c.BaseSHA, Branch: c.HeadRef}
}
