//! Range expansion in step: the fields of one `[[node]]` that hold ranges,
//! each expanded once for all of its names.

use super::error::LockstepError;
use crate::fleet::hostrange;

/// The fields of one `[[node]]` that hold ranges, each expanded once for
/// all of its names (not once per name: a 100,000-name range with an
/// endpoint range would otherwise expand 10^10 names).
#[derive(Default)]
pub(super) struct Lockstep {
    /// Expansions made so far, by field: its name and which method (and
    /// outlet) it belongs to. Each name takes its value out (every field is
    /// picked once per name), so no value is copied.
    /// (A few per [[node]]: found by a look along them.)
    expanded: Vec<(Slot, Vec<String>)>,
}

/// A field of a `[[node]]`: its name, its method and its outlet.
pub(super) type Slot = (&'static str, usize, usize);

impl Lockstep {
    /// Picks the i-th of n expansions of a field that may hold a range;
    /// `at`: the method (and outlet) the field belongs to.
    pub(super) fn pick(
        &mut self,
        value: &Option<String>,
        at: (usize, usize),
        i: usize,
        n: usize,
        field: &'static str,
    ) -> Result<Option<String>, LockstepError> {
        Ok(match self.ranged(value, at, i, n, field)? {
            Some(v) => Some(v),
            None => value.clone(),
        })
    }

    /// [`Lockstep::pick`] of a field that holds a range; `None` for any
    /// other (which keeps its own value, not copied here).
    pub(super) fn ranged(
        &mut self,
        value: &Option<String>,
        at: (usize, usize),
        i: usize,
        n: usize,
        field: &'static str,
    ) -> Result<Option<String>, LockstepError> {
        let Some(v) = value.as_ref().filter(|v| hostrange::is_range(v)) else {
            return Ok(None);
        };
        let key = (field, at.0, at.1);
        if let Some((_, all)) = self.expanded.iter_mut().find(|(k, _)| *k == key) {
            // Its length was checked against the names when it was expanded.
            return Ok(Some(std::mem::take(&mut all[i])));
        }
        let mut all = hostrange::expand(v)?;
        if all.len() != n {
            return Err(LockstepError::Count {
                field,
                value: v.clone(),
                got: all.len(),
                want: n,
            });
        }
        let picked = std::mem::take(&mut all[i]);
        self.expanded.push((key, all));
        Ok(Some(picked))
    }
}
