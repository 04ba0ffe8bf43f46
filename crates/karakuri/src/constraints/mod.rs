//! Constrained dynamics (being written).
