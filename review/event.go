package review

import (
	"context"
	"time"
)

// EventType names a pipeline event. The names are a contract of the
// /api/review/{id}/stream endpoint.
type EventType string

// Event types (docs/architecture.md).
const (
	EventPipelineStarted   EventType = "pipeline.started"
	EventAgentStarted      EventType = "agent.started"
	EventToolCalled        EventType = "tool.called"
	EventAgentHandoff      EventType = "agent.handoff"
	EventFindingDetected   EventType = "finding.detected"
	EventFindingVerified   EventType = "finding.verified"
	EventPipelineCompleted EventType = "pipeline.completed"
	EventPipelineFailed    EventType = "pipeline.failed"
)

// Stages of the pipeline, in order.
const (
	StagePlanner  = "planner"
	StageReviewer = "reviewer"
	StageVerifier = "verifier"
	StageReporter = "reporter"
)

// Event is one step of a review, as streamed to watchers. Data is any value
// that marshals to a JSON object.
type Event struct {
	Type  EventType `json:"type"`
	Stage string    `json:"stage,omitempty"`
	Agent string    `json:"agent,omitempty"`
	Time  time.Time `json:"time"`
	Data  any       `json:"data,omitempty"`
}

// Sink receives pipeline events. Emit must be safe for concurrent use and must
// not block the pipeline for long; a sink that cannot deliver an event handles
// that itself (the pipeline goes on).
type Sink interface {
	Emit(ctx context.Context, e Event)
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(ctx context.Context, e Event)

// Emit calls f.
func (f SinkFunc) Emit(ctx context.Context, e Event) { f(ctx, e) }

// Discard is a Sink that drops every event.
type Discard struct{}

// Emit does nothing.
func (Discard) Emit(context.Context, Event) {}
