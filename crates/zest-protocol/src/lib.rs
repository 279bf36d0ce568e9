//! Zest's record protocol: the records every partition writes to its log, with Zeebe's value
//! types, intents, rejection types and key layout. This crate is the lowest layer: it knows
//! nothing of BPMN, storage or networking.

mod distribution;
pub mod json;
mod key;
mod record;
mod value;

pub use distribution::*;
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

    pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
        // postcard only fails on writer errors (none for Vec) or on unsupported serde
        // features, which the types of this crate do not use.
        postcard::to_stdvec(value).expect("records and state values are postcard-encodable")
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
