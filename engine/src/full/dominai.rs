//! The DominAI player of seed 002 (docs/dominai.md): being written.
