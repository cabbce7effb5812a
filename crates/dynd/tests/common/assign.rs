//! Table-driven array assignment: rows of (destination type, source type,
//! source JSON, mode) and what each gives.

use dynd::kernels::assign::ErrorMode;
use dynd::{Array, ErrorKind};

/// Assigns `json` of `src_tp` into a fresh array of `dst_tp`: its JSON.
pub fn assign(dst_tp: &str, src_tp: &str, json: &str, mode: ErrorMode) -> dynd::Result<String> {
    let src = super::a(src_tp, json);
    let dst = Array::empty(dst_tp)?;
    dst.assign(&src, mode)?;
    Ok(dst.to_json())
}

/// What one [`assign`] gives: the destination's JSON, or an error of this
/// kind with this text (see [`Message`]).
pub type Outcome = Result<&'static str, (ErrorKind, &'static str)>;

/// (destination type, source type, source JSON, mode, outcome)
pub type Row = (&'static str, &'static str, &'static str, ErrorMode, Outcome);

/// How an expected error's text is compared with the message.
#[derive(Clone, Copy, Debug)]
pub enum Message {
    /// The message contains the text (`""`: any message).
    Contains,
    /// The message is the text.
    Exact,
}

/// Runs every row's assignment and checks its outcome, naming the row.
pub fn check_rows(message: Message, rows: &[Row]) {
    for &(dst, src, json, mode, want) in rows {
        let row = format!("{dst} <- {src} {json} ({mode})");
        match (assign(dst, src, json, mode), want) {
            (Ok(got), Ok(want)) => assert_eq!(got, want, "{row}"),
            (Err(e), Err((kind, text))) => {
                assert_eq!(e.kind(), kind, "{row}: {e}");
                match message {
                    Message::Contains => assert!(e.message().contains(text), "{row}: {e}"),
                    Message::Exact => assert_eq!(e.message(), text, "{row}"),
                }
            }
            (got, want) => panic!("{row}: got {got:?}, want {want:?}"),
        }
    }
}
