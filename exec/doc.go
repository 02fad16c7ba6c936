// Package exec is clink's streaming, Arrow-native executor: the Batch that
// carries rows and/or an Arrow record, the operator contract with its
// authoritative row path and optional columnar path, the single dispatch
// function every runner uses, and the counters EXPLAIN ANALYZE reads.
//
// The contracts follow seed 000 (shared/seeds/000_*.txt):
//
//   - A Batch born columnar carries only its record. The first row access
//     decodes it once, caches the rows and counts the materialisation
//     process-wide and at the stage that asked. Len never decodes.
//   - Every operator's row path (Process) is authoritative. An operator that
//     reports IngestsColumnar also implements ColumnarOperator; its
//     ProcessColumnar may answer "not handled" only before emitting anything,
//     because Dispatch then replays the batch through Process.
//   - Capabilities are answered by the operator itself (Capabilities), and the
//     planner's gates call the same method, so the two cannot drift.
//   - Watermarks and end-of-stream never reach the columnar hook.
package exec
