package store_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
)

// schemaFixture: an installation, a delivery, two queued runs of o/r#1
// (run1 from delivery d1, with finding fp1 and posted as review 99), and
// a repository.
const schemaFixture = `
INSERT INTO installations (id, account_login) VALUES (7, 'octo');
INSERT INTO repositories (id, installation_id, full_name) VALUES (70, 7, 'octo/app');
INSERT INTO webhook_deliveries (delivery_id, event) VALUES ('d1', 'pull_request');
INSERT INTO review_runs (id, mode, trigger, repository, pr_number, head_sha, delivery_id)
    VALUES ('00000000-0000-0000-0000-000000000001', 'pr', 'webhook', 'o/r', 1, 'a', 'd1');
INSERT INTO review_runs (id, mode, trigger, repository, pr_number, head_sha)
    VALUES ('00000000-0000-0000-0000-000000000002', 'pr', 'webhook', 'o/r', 1, 'b');
INSERT INTO findings (run_id, file_path, line_start, line_end, side, severity, category, title,
                      verification_status, confidence, fingerprint)
    VALUES ('00000000-0000-0000-0000-000000000001', 'a.go', 1, 1, 'RIGHT', 'warning', 'bug', 't',
            'verified', 0.5, 'fp1');
INSERT INTO review_events (run_id, seq, type) VALUES ('00000000-0000-0000-0000-000000000001', 1, 'pipeline.started');
UPDATE review_runs SET post_started_at = now(), posted_review_id = 99
    WHERE id = '00000000-0000-0000-0000-000000000001';
`

// TestSchemaInvariants checks that the database itself rejects what the
// application must never store. Each statement runs in a transaction that
// is rolled back, against the same fixture.
func TestSchemaInvariants(t *testing.T) {
	t.Parallel()
	_, raw := newStore(t)
	if _, err := raw.Exec(t.Context(), schemaFixture); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	const (
		run1 = "'00000000-0000-0000-0000-000000000001'"
		run2 = "'00000000-0000-0000-0000-000000000002'"
		// A finding's columns, then values with one field replaced per case.
		findingCols = `INSERT INTO findings (run_id, file_path, line_start, line_end, side, severity, category,
			title, verification_status, confidence, fingerprint, posted) VALUES `
		agentCols = `INSERT INTO agent_results (run_id, agent, status, error, timeout_seconds) VALUES `
	)
	tests := []struct {
		name string
		sql  string
		// want is the violated constraint; "" when the statement is valid.
		want string
	}{
		// webhook_deliveries
		{"duplicate delivery", `INSERT INTO webhook_deliveries (delivery_id, event) VALUES ('d1', 'push')`, "webhook_deliveries_pkey"},
		{"empty delivery id", `INSERT INTO webhook_deliveries (delivery_id, event) VALUES ('', 'push')`, "webhook_deliveries_delivery_id_check"},
		{"new delivery", `INSERT INTO webhook_deliveries (delivery_id, event) VALUES ('d2', 'push')`, ""},

		// review_runs
		{"second run for one delivery", `INSERT INTO review_runs (mode, trigger, diff_text, delivery_id) VALUES ('diff', 'api', 'x', 'd1')`, "review_runs_delivery_key"},
		{"run of an unknown delivery", `INSERT INTO review_runs (mode, trigger, diff_text, delivery_id) VALUES ('diff', 'api', 'x', 'nope')`, "review_runs_delivery_id_fkey"},
		{"bad mode", `INSERT INTO review_runs (mode, trigger, diff_text) VALUES ('patch', 'api', 'x')`, "review_runs_mode_check"},
		{"bad trigger", `INSERT INTO review_runs (mode, trigger, diff_text) VALUES ('diff', 'cron', 'x')`, "review_runs_trigger_check"},
		{"bad status", `UPDATE review_runs SET status = 'done', finished_at = now() WHERE id = ` + run2, "review_runs_status_check"},
		{"bad verdict", `UPDATE review_runs SET verdict = 'reject' WHERE id = ` + run2, "review_runs_verdict_check"},
		{"confidence above 1", `UPDATE review_runs SET confidence = 1.5 WHERE id = ` + run2, "review_runs_confidence_check"},
		{"options not an object", `UPDATE review_runs SET options = '[]' WHERE id = ` + run2, "review_runs_options_check"},
		{"zero max attempts", `UPDATE review_runs SET max_attempts = 0 WHERE id = ` + run2, "review_runs_max_attempts_check"},
		{"pr run without number", `INSERT INTO review_runs (mode, trigger, repository) VALUES ('pr', 'webhook', 'o/r')`, "review_runs_pr_identity"},
		{"diff run with a pull request", `INSERT INTO review_runs (mode, trigger, diff_text, repository, pr_number) VALUES ('diff', 'api', 'x', 'o/r', 2)`, "review_runs_pr_identity"},
		{"diff run without diff", `INSERT INTO review_runs (mode, trigger) VALUES ('diff', 'api')`, "review_runs_diff_text"},
		{"running without lease", `UPDATE review_runs SET status = 'running', locked_by = 'w' WHERE id = ` + run2, "review_runs_running_lease"},
		{"running without worker", `UPDATE review_runs SET status = 'running', lease_expires_at = now() WHERE id = ` + run2, "review_runs_running_lease"},
		{"final without finished_at", `UPDATE review_runs SET status = 'succeeded' WHERE id = ` + run2, "review_runs_finished_at"},
		{"posted without claiming the post", `UPDATE review_runs SET posted_review_id = 5 WHERE id = ` + run2, "review_runs_post_claimed"},
		{"one review for two runs", `UPDATE review_runs SET post_started_at = now(), posted_review_id = 99 WHERE id = ` + run2, "review_runs_posted_review_key"},
		{"two running runs of one pull request", `UPDATE review_runs SET status = 'running', locked_by = 'w', lease_expires_at = now() WHERE repository = 'o/r'`, "review_runs_one_running_per_pr"},
		{"one running run of a pull request", `UPDATE review_runs SET status = 'running', locked_by = 'w', lease_expires_at = now() WHERE id = ` + run2, ""},

		// findings
		{"finding without run", findingCols + `('00000000-0000-0000-0000-0000000000ff', 'a.go', 1, 1, 'RIGHT', 'warning', 'bug', 't', 'verified', 0.5, 'fp2', 'no')`, "findings_run_id_fkey"},
		{"bad severity", findingCols + `(` + run1 + `, 'a.go', 1, 1, 'RIGHT', 'major', 'bug', 't', 'verified', 0.5, 'fp2', 'no')`, "findings_severity_check"},
		{"bad category", findingCols + `(` + run1 + `, 'a.go', 1, 1, 'RIGHT', 'warning', 'style', 't', 'verified', 0.5, 'fp2', 'no')`, "findings_category_check"},
		{"bad side", findingCols + `(` + run1 + `, 'a.go', 1, 1, 'right', 'warning', 'bug', 't', 'verified', 0.5, 'fp2', 'no')`, "findings_side_check"},
		{"bad verification status", findingCols + `(` + run1 + `, 'a.go', 1, 1, 'RIGHT', 'warning', 'bug', 't', 'maybe', 0.5, 'fp2', 'no')`, "findings_verification_status_check"},
		{"bad placement", findingCols + `(` + run1 + `, 'a.go', 1, 1, 'RIGHT', 'warning', 'bug', 't', 'verified', 0.5, 'fp2', 'comment')`, "findings_posted_check"},
		{"confidence below 0", findingCols + `(` + run1 + `, 'a.go', 1, 1, 'RIGHT', 'warning', 'bug', 't', 'verified', -0.1, 'fp2', 'no')`, "findings_confidence_check"},
		{"empty file path", findingCols + `(` + run1 + `, '', 1, 1, 'RIGHT', 'warning', 'bug', 't', 'verified', 0.5, 'fp2', 'no')`, "findings_file_path_check"},
		{"lines reversed", findingCols + `(` + run1 + `, 'a.go', 5, 4, 'RIGHT', 'warning', 'bug', 't', 'verified', 0.5, 'fp2', 'no')`, "findings_line_range"},
		{"no fingerprint", findingCols + `(` + run1 + `, 'a.go', 1, 1, 'RIGHT', 'warning', 'bug', 't', 'verified', 0.5, '', 'no')`, "findings_fingerprint_check"},
		{"fingerprint twice in a run", findingCols + `(` + run1 + `, 'b.go', 1, 1, 'RIGHT', 'warning', 'bug', 't', 'verified', 0.5, 'fp1', 'no')`, "findings_run_id_fingerprint_key"},
		{"same fingerprint in another run", findingCols + `(` + run2 + `, 'a.go', 1, 1, 'RIGHT', 'warning', 'bug', 't', 'verified', 0.5, 'fp1', 'no')`, ""},

		// agent_results
		{"agent result without run", agentCols + `('00000000-0000-0000-0000-0000000000ff', 'a', 'success', '', NULL)`, "agent_results_run_id_fkey"},
		{"bad agent status", agentCols + `(` + run1 + `, 'a', 'crashed', '', NULL)`, "agent_results_status_check"},
		{"error without message", agentCols + `(` + run1 + `, 'a', 'error', '', NULL)`, "agent_results_error_message"},
		{"timeout without seconds", agentCols + `(` + run1 + `, 'a', 'timeout', '', NULL)`, "agent_results_timeout_seconds"},
		{"timeout with seconds", agentCols + `(` + run1 + `, 'a', 'timeout', '', 30)`, ""},

		// review_events
		{"event without run", `INSERT INTO review_events (run_id, seq, type) VALUES ('00000000-0000-0000-0000-0000000000ff', 1, 'tool.called')`, "review_events_run_id_fkey"},
		{"bad event type", `INSERT INTO review_events (run_id, seq, type) VALUES (` + run1 + `, 2, 'tool.finished')`, "review_events_type_check"},
		{"event data not an object", `INSERT INTO review_events (run_id, seq, type, data) VALUES (` + run1 + `, 2, 'tool.called', '"x"')`, "review_events_data_check"},
		{"seq twice", `INSERT INTO review_events (run_id, seq, type) VALUES (` + run1 + `, 1, 'tool.called')`, "review_events_pkey"},
		{"seq zero", `INSERT INTO review_events (run_id, seq, type) VALUES (` + run1 + `, 0, 'tool.called')`, "review_events_seq_check"},

		// installations, repositories, pull requests
		{"repository without owner", `INSERT INTO repositories (id, installation_id, full_name) VALUES (71, 7, 'app')`, "repositories_full_name_check"},
		{"repository of unknown installation", `INSERT INTO repositories (id, installation_id, full_name) VALUES (71, 8, 'octo/other')`, "repositories_installation_id_fkey"},
		{"two live repositories with one name", `INSERT INTO repositories (id, installation_id, full_name) VALUES (71, 7, 'Octo/App')`, "repositories_full_name_key"},
		{"a removed repository frees its name", `UPDATE repositories SET removed_at = now() WHERE id = 70;
			INSERT INTO repositories (id, installation_id, full_name) VALUES (71, 7, 'octo/app')`, ""},
		{"pull request number 0", `INSERT INTO pull_requests (repository, number) VALUES ('o/r', 0)`, "pull_requests_number_check"},

		// GitHub's repository ids (000010): optional, positive when known.
		{"run with repository id 0", `UPDATE review_runs SET repo_id = 0 WHERE id = ` + run2, "review_runs_repo_id_check"},
		{"run with a repository id", `UPDATE review_runs SET repo_id = 70 WHERE id = ` + run2, ""},
		{"ledger entry with repository id -1", `INSERT INTO pr_findings (repository, pr_number, fingerprint, state, finding, file_path,
			severity, category, first_seen_sha, last_seen_sha, repo_id)
			VALUES ('o/r', 1, 'fp1', 'open', '{}', 'a.go', 'warning', 'bug', 'a', 'a', -1)`, "pr_findings_repo_id_check"},
		{"ledger entry with a repository id", `INSERT INTO pr_findings (repository, pr_number, fingerprint, state, finding, file_path,
			severity, category, first_seen_sha, last_seen_sha, repo_id)
			VALUES ('o/r', 1, 'fp1', 'open', '{}', 'a.go', 'warning', 'bug', 'a', 'a', 70)`, ""},
		{"learning with repository id 0", `INSERT INTO learnings (repository, instruction, status, author, repo_id)
			VALUES ('o/r', 'x', 'proposed', 'me', 0)`, "learnings_repo_id_check"},
		{"learning with a repository id", `INSERT INTO learnings (repository, instruction, status, author, repo_id)
			VALUES ('o/r', 'x', 'proposed', 'me', 70)`, ""},
	}
	// errRollback makes pgx.BeginFunc roll back a statement that succeeded.
	errRollback := errors.New("rollback")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pgx.BeginFunc(t.Context(), raw, func(tx pgx.Tx) error {
				if _, err := tx.Exec(t.Context(), tt.sql); err != nil {
					return err
				}
				return errRollback
			})
			got := ""
			if !errors.Is(err, errRollback) {
				got = constraintOf(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
