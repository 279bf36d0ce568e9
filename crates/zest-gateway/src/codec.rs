//! The codec of the gateway's gRPC services: prost's, with the response buffer sized once per
//! message and handed on at 8 KiB.
//!
//! tonic's default encodes the messages of a response stream that are ready into one buffer
//! until it holds 32 KiB, and grows the buffer by doubling while it does. A job stream's
//! messages are activated jobs of some kilobytes each (their variables), so under load every
//! stream's buffer doubled past 32 KiB again and again: allocations too large for the
//! allocator's thread cache, each on fresh pages. A profile of page faults of a node taking
//! the clients' commands for a 3-node cluster had 16 % of them there. Here a buffer starts at
//! 16 KiB, is handed on once it holds 8 KiB (small messages still travel together), and grows
//! once, to what a message needs, for a message larger than that.

use std::marker::PhantomData;

use tonic::codec::{BufferSettings, Codec, EncodeBuf, Encoder};
use tonic::Status;
use tonic_prost::{ProstCodec, ProstDecoder};

/// A 16 KiB buffer (within the 32 KiB the allocator keeps in its thread caches), handed on at
/// 8 KiB.
fn settings() -> BufferSettings {
    BufferSettings::new(16 << 10, 8 << 10)
}

/// prost's codec with [`settings`] for what it encodes (named by `build.rs` for the generated
/// services and clients).
#[derive(Debug, Clone, Copy)]
pub struct GatewayCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for GatewayCodec<T, U> {
    fn default() -> Self {
        GatewayCodec(PhantomData)
    }
}

impl<T, U> Codec for GatewayCodec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = SizedEncoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        SizedEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstCodec::<T, U>::raw_decoder(BufferSettings::default())
    }
}

/// prost's encoding into a buffer grown once to the message's size: a large message (a batch
/// of activated jobs of some megabytes) no longer doubles the buffer step by step, copying it
/// each time and holding up to twice its size.
#[derive(Debug)]
pub struct SizedEncoder<T>(PhantomData<T>);

impl<T: prost::Message> Encoder for SizedEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        buf.reserve(item.encoded_len());
        item.encode(buf)
            .map_err(|e| Status::internal(format!("encoding a message: {e}")))
    }

    fn buffer_settings(&self) -> BufferSettings {
        settings()
    }
}
