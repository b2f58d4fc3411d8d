package webhook

import (
	"context"
	"encoding/json"

	"github.com/mergeguard/mergeguard/github"
	"github.com/mergeguard/mergeguard/server/store"
)

// reviewCommentHandler records pull_request_review_comment deliveries
// (replies in review threads) as ignored, without any GitHub call: the App
// subscribes to them for conversations in MergeGuard's threads, which are
// not handled yet.
type reviewCommentHandler struct {
	store Store
}

// conversationNotHandled is why a review comment is ignored.
const conversationNotHandled = "conversation is not handled yet"

func (h *reviewCommentHandler) Handles() []string { return []string{"pull_request_review_comment"} }

func (h *reviewCommentHandler) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.PullRequestReviewCommentEvent
	if err := json.Unmarshal(payload, &event); err != nil {
		return recordMalformed(ctx, h.store, eventType, deliveryID, err)
	}
	number := event.PullRequest.Number
	ctx, log := prContext(ctx, event.Installation.ID, event.Repository, number)
	d := store.Delivery{
		ID:             deliveryID,
		Event:          eventType,
		Action:         event.Action,
		InstallationID: event.Installation.ID,
		Repository:     event.Repository.FullName,
		PRNumber:       number,
		Sender:         event.Sender.Login,
	}
	return ignore(ctx, h.store, &log, d, conversationNotHandled)
}
