//! One value per parallelism axis, indexed by [`Axis`]: the shape of every
//! per-axis tally, report, palette and control, so that a new axis is a
//! new variant of `Axis` and nothing else to list.

use std::ops::{Index, IndexMut};

use super::axis::Axis;

/// A value for each axis, in [`Axis::ALL`]'s order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PerAxis<T>(pub [T; Axis::COUNT]);

impl<T> PerAxis<T> {
    /// The value of each axis, made from the axis.
    pub fn from_fn(mut f: impl FnMut(Axis) -> T) -> Self {
        PerAxis(std::array::from_fn(|i| f(Axis::ALL[i])))
    }

    /// Each axis with its value, in [`Axis::ALL`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = (Axis, &T)> {
        Axis::ALL.into_iter().zip(self.0.iter())
    }

    /// Each axis with its value to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Axis, &mut T)> {
        Axis::ALL.into_iter().zip(self.0.iter_mut())
    }

    /// The values, each mapped.
    pub fn map<U>(&self, mut f: impl FnMut(Axis, &T) -> U) -> PerAxis<U> {
        PerAxis::from_fn(|axis| f(axis, &self[axis]))
    }
}

impl<T> Index<Axis> for PerAxis<T> {
    type Output = T;
    fn index(&self, axis: Axis) -> &T {
        &self.0[axis.index()]
    }
}

impl<T> IndexMut<Axis> for PerAxis<T> {
    fn index_mut(&mut self, axis: Axis) -> &mut T {
        &mut self.0[axis.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_axis_reads_its_own_place() {
        let mut p = PerAxis::from_fn(|a| a.name().to_string());
        for axis in Axis::ALL {
            assert_eq!(p[axis], axis.name());
        }
        p[Axis::Cp].push('!');
        assert_eq!(
            p.iter().last().map(|(a, v)| (a, v.as_str())),
            Some((Axis::Cp, "cp!"))
        );
        assert_eq!(p.map(|_, v| v.len()).0, [2, 2, 2, 2, 3]);
    }

    #[test]
    fn codes_and_labels_round_trip() {
        for axis in Axis::ALL {
            assert_eq!(Axis::from_name(axis.name()), Some(axis));
            assert_eq!(axis.label(), axis.name().to_uppercase());
            assert_eq!(
                serde_json::to_string(&axis).unwrap(),
                format!("\"{}\"", axis.name())
            );
        }
        for op in crate::model::op::OpKind::ALL {
            assert_eq!(
                serde_json::to_string(&op).unwrap(),
                format!("\"{}\"", op.name())
            );
        }
    }
}
