//! Zest's record protocol: the records every partition writes to its log, with Zeebe's value
//! types, intents, rejection types and key layout. This crate is the lowest layer: it knows
//! nothing of BPMN, storage or networking.

mod batch;
mod distribution;
mod history_deletion;
mod identity;
pub mod json;
mod key;
mod record;
mod value;

pub use batch::*;
pub use distribution::*;
pub use history_deletion::*;
pub use identity::*;
pub use key::*;
pub use record::*;
pub use value::*;

/// Binary codec used for records and state values (postcard over serde): compact, fast, and
/// stable for the types in this crate. JSON documents (variables) travel inside as strings.
pub mod codec {
    use serde::{de::DeserializeOwned, Serialize};

    #[derive(Debug, thiserror::Error)]
    #[error("codec error: {0}")]
    pub struct CodecError(#[from] postcard::Error);

    /// Encodes `value` into a vector of its exact length. The encoding is written into a
    /// buffer of the thread's, kept between calls, and copied out once: written straight into
    /// a new vector, a record of a few hundred bytes grew it by doubling four or five times
    /// (the reallocations were 6 % of the server's samples under the realistic benchmark).
    pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut buf) => {
                buf.clear();
                write(value, &mut buf);
                let out = buf.to_vec();
                if buf.capacity() > MAX_SCRATCH {
                    *buf = Vec::new();
                }
                out
            }
            // (a value whose serialization encodes another value)
            Err(_) => {
                let mut buf = Vec::new();
                write(value, &mut buf);
                buf
            }
        })
    }

    /// The largest buffer a thread keeps for [`encode`]; a larger encoding's goes after it
    /// (a log entry of a large group, say). Every thread that encodes keeps one, blocking
    /// threads of the runtime too, so it stays small: state values and records are mostly a
    /// few hundred bytes.
    const MAX_SCRATCH: usize = 64 << 10;

    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    fn write<T: Serialize>(value: &T, buf: &mut Vec<u8>) {
        // postcard only fails on writer errors (none here) or on unsupported serde
        // features, which the types of this crate do not use.
        postcard::serialize_with_flavor::<T, _, ()>(value, Append(buf))
            .expect("records and state values are postcard-encodable")
    }

    /// postcard's output appended to a vector.
    struct Append<'a>(&'a mut Vec<u8>);

    impl postcard::ser_flavors::Flavor for Append<'_> {
        type Output = ();

        fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
            self.0.extend_from_slice(data);
            Ok(())
        }

        fn try_push(&mut self, data: u8) -> postcard::Result<()> {
            self.0.push(data);
            Ok(())
        }

        fn finalize(self) -> postcard::Result<()> {
            Ok(())
        }
    }

    pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
        Ok(postcard::from_bytes(bytes)?)
    }

    /// Decodes `bytes` with a seed: for a decoding that hands out what it decodes as it goes
    /// (the records of a batch one at a time) instead of building it whole.
    pub fn decode_seed<'a, S: serde::de::DeserializeSeed<'a>>(
        seed: S,
        bytes: &'a [u8],
    ) -> Result<S::Value, CodecError> {
        let mut de = postcard::Deserializer::from_bytes(bytes);
        Ok(seed.deserialize(&mut de)?)
    }

    /// Like [`decode`], for types that borrow from `bytes` (`&str`, `&[u8]` fields are not
    /// copied).
    pub fn decode_borrowed<'a, T: serde::Deserialize<'a>>(
        bytes: &'a [u8],
    ) -> Result<T, CodecError> {
        Ok(postcard::from_bytes(bytes)?)
    }
}

#[cfg(test)]
mod codec_tests {
    use super::*;

    /// The thread's buffer leaves nothing behind: each encoding is postcard's, in a vector of
    /// its own exact length, also after a larger one and after one beyond the kept size.
    #[test]
    fn encodings_are_exact_and_independent() {
        for n in [0, 300, 5, 3 << 20, 7, 1] {
            let value = ("p".repeat(n), -42i64, vec![7u8; n % 11]);
            let bytes = codec::encode(&value);
            assert_eq!(bytes, postcard::to_stdvec(&value).unwrap(), "{n}");
            assert_eq!(bytes.capacity(), bytes.len(), "{n}");
            let back: (String, i64, Vec<u8>) = codec::decode(&bytes).unwrap();
            assert_eq!(back, value);
        }
    }
}
