// Package alert raises floe's alerts and sends them to the alert sinks of
// floe.yaml (alerts.webhooks). It is the daemon's (floe serve) answer to
// "nothing may fail silently": a compaction that stopped, runs that keep
// failing, a table halted after a run failed an invariant check and a
// connection check that fails all reach a person.
//
// # Evaluation
//
// [Evaluate] is a pure function of an [Input] and a time. For one table it
// says whether two alerts fire:
//
//   - freshness: the newest successful compaction known (floe's run
//     records, or the table metadata's when readable) is older than the
//     policy's freshness_sla; a table never compacted fires when its
//     history is older than the SLA. No SLA, no alert.
//   - failures: the newest runs failed (or were abandoned)
//     alert_after_failures times in a row (default 2); a done run resets
//     the count.
//
// Neither needs the table's metadata, so they are judged when compaction
// cannot run (dead engine, bad credentials); a freshness alert that cannot
// be judged at all is left out, keeping its stored state. [Check] makes
// the alert of a connection check (kind check), and [Halted] that of a
// table floe stopped running after an invariant failure (kind halted),
// firing until a person resumes the table.
//
// # Notification
//
// A [Notifier] keeps each alert's state in the store (kind and key,
// store.AlertRecord) and notifies — one log line, then a delivery to every
// [Sink] — when the state changes (firing, resolved) and again every
// Repeat while it keeps firing. The invariant, across process restarts:
// each notification is numbered (seq) and a sink's delivery records the
// number it received, so a sink gets each notification once, a sink that
// failed gets it at the next [Notifier.Notify], and the alert counts as
// notified (the repeat clock starts) only when every sink has it. Changes
// are a compare-and-set on seq, so two processes cannot both announce one
// transition. Delivery is at least once: a process killed between a
// receiver's 2xx and the store's record sends that notification again.
//
// # Sinks
//
// [Webhook] POSTs {"text": …} (format slack) or the whole [Alert] (format
// json), retrying network errors, 408, 429 and 5xx with exponential
// backoff and a per-request timeout, honouring Retry-After. Its URL and
// header values may hold secrets: errors and logs show the URL only as
// config.RedactURL prints it.
package alert
