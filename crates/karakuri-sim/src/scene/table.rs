//! Tables read from CSV files: an actuator target `{table: FILE.csv}` (`time, value`) and the
//! `trajectory` controller's joint table (`time` and one column per joint). Read when the scene
//! is loaded (as mesh files are), paths relative to the scene file; errors name the file and
//! the line.
//!
//! A table is linearly interpolated in time and clamped outside its range: before its first
//! time it holds its first row, after its last time its last row (and its rate is 0 there).

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};


/// A table file: its path as written and, once the scene is loaded, its rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub struct TableFile {
    /// The path as written (relative paths: relative to the scene file).
    pub path: String,
    /// The times (s), strictly increasing `(rows)`; empty until read.
    pub times: Arc<Vec<f64>>,
    /// The values after the time column, row after row `(rows x columns)`.
    pub values: Arc<Vec<f64>>,
    /// Columns after the time column.
    pub columns: usize,
}

impl From<String> for TableFile {
    fn from(path: String) -> TableFile {
        TableFile { path, ..TableFile::default() }
    }
}

impl From<TableFile> for String {
    fn from(t: TableFile) -> String {
        t.path
    }
}

impl TableFile {
    /// Column `c`'s value at time `t` (linear interpolation, clamped outside the table's time
    /// range) and its rate (the slope of the segment holding `t`; 0 outside the range). No
    /// allocation: a binary search for the segment.
    pub fn at(&self, t: f64, c: usize) -> (f64, f64) {
        let (ts, n) = (&self.times, self.columns);
        let x = |i: usize| self.values[i * n + c];
        let Some(&last) = ts.last() else { return (0.0, 0.0) };
        if t <= ts[0] {
            return (x(0), 0.0);
        }
        if t >= last {
            return (x(ts.len() - 1), 0.0);
        }
        // ts[i] <= t < ts[i + 1]
        let i = ts.partition_point(|&ti| ti <= t) - 1;
        let slope = (x(i + 1) - x(i)) / (ts[i + 1] - ts[i]);
        (x(i) + slope * (t - ts[i]), slope)
    }

    /// Reads the file at `path` (resolved): rows of `1 + columns` numbers separated by commas;
    /// a first line that is not numbers is a header, blank lines and lines starting with `#`
    /// are skipped; times strictly increasing, every number finite, at least one row. `columns`
    /// `None`: as many as the first row has. Errors name the file and the line.
    pub fn read(&mut self, path: &Path, columns: Option<usize>) -> Result<(), String> {
        let file = path.display();
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read table '{file}': {e}"))?;
        let (mut times, mut values) = (Vec::new(), Vec::new());
        let mut width = columns.map(|c| c + 1);
        let mut first = true;
        for (k, line) in text.lines().enumerate() {
            let at = |reason: String| format!("table '{file}' line {}: {reason}", k + 1);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            let parsed: Result<Vec<f64>, _> = cells.iter().map(|c| c.parse::<f64>()).collect();
            let row = match parsed {
                Ok(row) => row,
                Err(_) if first => {
                    first = false;
                    continue; // a header
                }
                Err(_) => {
                    let bad = cells.iter().find(|c| c.parse::<f64>().is_err()).unwrap_or(&"");
                    return Err(at(format!("'{bad}' is not a number")));
                }
            };
            first = false;
            let w = *width.get_or_insert(row.len());
            if row.len() != w || w < 2 {
                return Err(at(format!("expected {} comma-separated numbers (time and {} value(s)), found {}", w.max(2), w.max(2) - 1, row.len())));
            }
            if let Some(x) = row.iter().find(|x| !x.is_finite()) {
                return Err(at(format!("{x} is not finite")));
            }
            if times.last().is_some_and(|&t| row[0] <= t) {
                return Err(at(format!("time {} does not increase (the previous row's is {})", row[0], times.last().unwrap())));
            }
            times.push(row[0]);
            values.extend_from_slice(&row[1..]);
        }
        if times.is_empty() {
            return Err(format!("table '{file}' has no rows"));
        }
        self.columns = width.unwrap_or(2) - 1;
        self.times = Arc::new(times);
        self.values = Arc::new(values);
        Ok(())
    }
}
