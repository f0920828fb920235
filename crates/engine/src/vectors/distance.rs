//! The three distance functions of vector indexes and the scores
//! SearchVectors reports for them, as AWS's API reference defines them:
//! COSINE scores 1 − cosine similarity (0 identical … 2 opposite, smallest
//! first), EUCLIDEAN the Euclidean distance (smallest first), DOT_PRODUCT
//! the dot product (largest first).
//!
//! Vectors are held as f32 (DynamoDB stores them at that precision); a
//! reported score is computed in f64 from those f32 components, so it is
//! the same whichever path (graph or exact scan) found the item.

use crate::schema::DistanceFunction;

/// The score of `stored` against `query` under `function`.
pub fn score(function: DistanceFunction, query: &[f32], stored: &[f32]) -> f64 {
    debug_assert_eq!(query.len(), stored.len());
    match function {
        DistanceFunction::DotProduct => dot(query, stored),
        DistanceFunction::Euclidean => query
            .iter()
            .zip(stored)
            .map(|(a, b)| {
                let d = f64::from(*a) - f64::from(*b);
                d * d
            })
            .sum::<f64>()
            .sqrt(),
        DistanceFunction::Cosine => {
            let norms = (dot(query, query) * dot(stored, stored)).sqrt();
            // A zero vector is as far from everything as an orthogonal one.
            if norms == 0.0 {
                1.0
            } else {
                1.0 - dot(query, stored) / norms
            }
        }
    }
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

/// A cheap f32 ranking key for scans: ordered like the score, smaller is
/// more similar (the exact score is computed afterwards for the winners).
pub fn rank_key(function: DistanceFunction, query: &[f32], query_norm: f32, stored: &[f32]) -> f32 {
    match function {
        DistanceFunction::DotProduct => -dot_f32(query, stored),
        DistanceFunction::Euclidean => {
            let mut sums = [0f32; 8];
            let (a, b) = (query.chunks_exact(8), stored.chunks_exact(8));
            let (ra, rb) = (a.remainder(), b.remainder());
            for (x, y) in a.zip(b) {
                for i in 0..8 {
                    let d = x[i] - y[i];
                    sums[i] += d * d;
                }
            }
            let tail: f32 = ra.iter().zip(rb).map(|(x, y)| (x - y) * (x - y)).sum();
            sums.iter().sum::<f32>() + tail
        }
        DistanceFunction::Cosine => {
            let norms = query_norm * dot_f32(stored, stored).sqrt();
            if norms == 0.0 {
                1.0
            } else {
                1.0 - dot_f32(query, stored) / norms
            }
        }
    }
}

/// The query's norm, which cosine ranking needs once per search.
pub fn norm(vector: &[f32]) -> f32 {
    dot_f32(vector, vector).sqrt()
}

fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            sums[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f32>() + tail
}

/// Whether a smaller score is more similar (COSINE, EUCLIDEAN) or a
/// larger one (DOT_PRODUCT).
pub fn ascending(function: DistanceFunction) -> bool {
    function != DistanceFunction::DotProduct
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_the_documented_conventions() {
        let a = [1.0, 0.0];
        let b = [-1.0, 0.0];
        assert_eq!(score(DistanceFunction::Cosine, &a, &a), 0.0);
        assert_eq!(score(DistanceFunction::Cosine, &a, &b), 2.0);
        assert_eq!(score(DistanceFunction::Euclidean, &a, &b), 2.0);
        assert_eq!(score(DistanceFunction::DotProduct, &a, &b), -1.0);
        assert_eq!(score(DistanceFunction::Cosine, &a, &[0.0, 0.0]), 1.0);
    }

    #[test]
    fn rank_keys_order_like_scores() {
        let q = [0.3f32, -1.0, 2.0, 0.5, 0.1, 0.2, 0.3, 0.4, 0.9];
        let xs = [[1.0f32; 9], [-0.5; 9], [0.25; 9]];
        for f in [
            DistanceFunction::Cosine,
            DistanceFunction::Euclidean,
            DistanceFunction::DotProduct,
        ] {
            let mut by_rank: Vec<usize> = (0..3).collect();
            by_rank.sort_by(|&i, &j| {
                rank_key(f, &q, norm(&q), &xs[i]).total_cmp(&rank_key(f, &q, norm(&q), &xs[j]))
            });
            let mut by_score: Vec<usize> = (0..3).collect();
            by_score.sort_by(|&i, &j| {
                let (a, b) = (score(f, &q, &xs[i]), score(f, &q, &xs[j]));
                if ascending(f) {
                    a.total_cmp(&b)
                } else {
                    b.total_cmp(&a)
                }
            });
            assert_eq!(by_rank, by_score, "{f:?}");
        }
    }
}
