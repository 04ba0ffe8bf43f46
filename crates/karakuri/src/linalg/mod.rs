//! Linear algebra on preallocated buffers, the one layer every solve goes through: the
//! branch-induced sparse LᵀDL of tree-patterned matrices ([`ltdl`]: the mass matrix, hybrid
//! dynamics' forward block, the constraint solvers, the simulator) and the small dense
//! factorisations ([`dense`]: LU, Cholesky, LDLᵀ, pivoted QR, the 6x6 joint blocks of the
//! articulated-body algorithm). Nothing here knows about models beyond a parent array, and
//! nothing allocates after construction.

pub mod dense;
pub mod ltdl;

pub use ltdl::Factorization;
