//! The 24 rotations that only permute and flip axes ("quarter turns": URDF placements with
//! `rpy` in multiples of π/2, such as every arm joint of the Panda). Products with them move and
//! negate numbers and multiply nothing when the rotation is known at compile time: the
//! functions here take it as a const parameter and `dispatch_quarter_turn!` selects it. CRBA's
//! composite-inertia step uses them (`algorithms::add_inertia_to_parent`).

use super::{Mat3, Vec3};

/// Rotation `code`: column `j` is `sign[j] · e_{index[j]}` (`code` 0 is the identity).
pub(crate) const QUARTER_TURNS: [([usize; 3], [f64; 3]); 24] = quarter_turns();

const fn quarter_turns() -> [([usize; 3], [f64; 3]); 24] {
    const PERMS: [([usize; 3], f64); 6] =
        [([0, 1, 2], 1.0), ([1, 2, 0], 1.0), ([2, 0, 1], 1.0), ([0, 2, 1], -1.0), ([2, 1, 0], -1.0), ([1, 0, 2], -1.0)];
    let mut out = [([0, 1, 2], [1.0; 3]); 24];
    let (mut n, mut p) = (0, 0);
    while p < 6 {
        let mut bits = 0;
        while bits < 8 {
            let sign = [
                if bits & 1 == 0 { 1.0 } else { -1.0 },
                if bits & 2 == 0 { 1.0 } else { -1.0 },
                if bits & 4 == 0 { 1.0 } else { -1.0 },
            ];
            // a proper rotation: det = sign(π) σ0 σ1 σ2 = +1
            if PERMS[p].1 * sign[0] * sign[1] * sign[2] > 0.0 {
                out[n] = (PERMS[p].0, sign);
                n += 1;
            }
            bits += 1;
        }
        p += 1;
    }
    out
}

/// The code of the quarter turn within `tol` of `r` entrywise, if any.
pub(crate) fn quarter_turn_code(r: &Mat3, tol: f64) -> Option<u8> {
    (0..24u8).find(|&q| (quarter_turn_matrix(q) - r).amax() <= tol)
}

/// The matrix of quarter turn `q`.
#[inline(always)]
pub(crate) fn quarter_turn_matrix(q: u8) -> Mat3 {
    let (index, sign) = QUARTER_TURNS[q as usize];
    let mut m = Mat3::zeros();
    for j in 0..3 {
        m[(index[j], j)] = sign[j];
    }
    m
}

/// `P v` for quarter turn `Q`: entry `π(j)` is `σ_j v_j`.
#[inline(always)]
pub(crate) fn apply_quarter_turn<const Q: u8>(v: &Vec3) -> Vec3 {
    let (index, sign) = QUARTER_TURNS[Q as usize];
    let mut out = Vec3::zeros();
    for j in 0..3 {
        out[index[j]] = sign[j] * v[j];
    }
    out
}

/// `P S Pᵀ` for quarter turn `Q` and a symmetric `S` as rows `s[a][b]`: entry `(π(a), π(b))` is
/// `σ_a σ_b S[a][b]`.
#[inline(always)]
pub(crate) fn conjugate_quarter_turn<const Q: u8>(s: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let (index, sign) = QUARTER_TURNS[Q as usize];
    let mut out = [[0.0; 3]; 3];
    for a in 0..3 {
        for b in 0..3 {
            out[index[a]][index[b]] = sign[a] * sign[b] * s[a][b];
        }
    }
    out
}

/// Calls `$f::<Q>($args)` for the runtime quarter-turn code `$q` (0..24).
macro_rules! dispatch_quarter_turn {
    ($q:expr, $f:ident ( $($args:expr),* )) => {
        match $q {
            0 => $f::<0>($($args),*), 1 => $f::<1>($($args),*), 2 => $f::<2>($($args),*),
            3 => $f::<3>($($args),*), 4 => $f::<4>($($args),*), 5 => $f::<5>($($args),*),
            6 => $f::<6>($($args),*), 7 => $f::<7>($($args),*), 8 => $f::<8>($($args),*),
            9 => $f::<9>($($args),*), 10 => $f::<10>($($args),*), 11 => $f::<11>($($args),*),
            12 => $f::<12>($($args),*), 13 => $f::<13>($($args),*), 14 => $f::<14>($($args),*),
            15 => $f::<15>($($args),*), 16 => $f::<16>($($args),*), 17 => $f::<17>($($args),*),
            18 => $f::<18>($($args),*), 19 => $f::<19>($($args),*), 20 => $f::<20>($($args),*),
            21 => $f::<21>($($args),*), 22 => $f::<22>($($args),*), _ => $f::<23>($($args),*),
        }
    };
}
pub(crate) use dispatch_quarter_turn;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::rotation_about;
    use std::f64::consts::FRAC_PI_2;

    #[test]
    fn the_24_quarter_turns_are_distinct_rotations() {
        for q in 0..24u8 {
            let m = quarter_turn_matrix(q);
            assert!((m * m.transpose() - Mat3::identity()).amax() == 0.0 && m.determinant() == 1.0, "{q}");
            assert_eq!(quarter_turn_code(&m, 0.0), Some(q));
        }
        assert_eq!(quarter_turn_code(&Mat3::identity(), 0.0), Some(0));
    }

    #[test]
    fn products_match_the_matrices() {
        // Panda's joint placements: rpy = (±π/2, 0, 0), with cos(π/2) residues
        let r = rotation_about(&Vec3::x(), -FRAC_PI_2);
        assert!(r.iter().any(|x| x.abs() > 0.0 && x.abs() < 1e-15), "has residues");
        let q = quarter_turn_code(&r, 1e-12).unwrap();
        let p = quarter_turn_matrix(q);
        assert!((p - r).amax() < 1e-15);
        assert!(quarter_turn_code(&rotation_about(&Vec3::z(), 1e-6), 1e-12).is_none());
        fn check<const Q: u8>() {
            let p = quarter_turn_matrix(Q);
            let v = Vec3::new(0.3, -0.4, 0.5);
            assert_eq!(apply_quarter_turn::<Q>(&v), p * v);
            let s = [[0.3, 0.02, -0.05], [0.02, 0.2, 0.01], [-0.05, 0.01, 0.4]];
            let sm = Mat3::from_fn(|a, b| s[a][b]);
            let c = conjugate_quarter_turn::<Q>(&s);
            assert_eq!(Mat3::from_fn(|a, b| c[a][b]), p * sm * p.transpose());
        }
        for q in 0..24u8 {
            dispatch_quarter_turn!(q, check());
        }
    }
}
