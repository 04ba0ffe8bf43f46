//! Hybrid dynamics (being written).
