//! The coordinator service's wire types and stubs, generated from
//! `proto/muggins.proto`, and the descriptor set for server reflection.

#[allow(clippy::all, missing_debug_implementations, unreachable_pub)]
mod generated {
    tonic::include_proto!("muggins.v1");
}

pub use generated::*;

/// The encoded `FileDescriptorSet` of the service, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/muggins_descriptor.bin"));
