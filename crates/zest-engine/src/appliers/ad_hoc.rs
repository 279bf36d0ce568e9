//! AD_HOC_SUB_PROCESS_INSTRUCTION: an ad-hoc sub-process told that it is done.

use super::*;
use crate::state::key_i64;
use crate::state::Ks;
use crate::state::Txn;

/// AD_HOC_SUB_PROCESS_INSTRUCTION COMPLETED with the completion condition fulfilled: the
/// sub-process completes once its flows are (ad_hoc::job_flow_completed).
pub(super) fn apply(
    txn: &mut Txn<'_>,
    r: &Record,
    a: &zest_protocol::AdHocSubProcessInstructionRecord,
) {
    if r.intent == Intent::Completed && a.completion_condition_fulfilled {
        txn.put_raw(
            Ks::AdHocFulfilled,
            key_i64(a.ad_hoc_sub_process_instance_key),
            Vec::new(),
        );
    }
}
