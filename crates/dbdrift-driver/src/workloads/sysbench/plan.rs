// The run workload compiled from its spec: SQL per table, placeholder layout, parameter
// generators resolved to slots. Compiling is where statement-level spec errors surface.

use super::spec::{GenKind, ParamSpec, RowsMode, RunSpec, TablePick};
use crate::error::DriverError;
use crate::workload::{max_placeholder, Gen, ParamGen};

pub struct Entry {
    /// SQL with `{table}` replaced, index 0 is table 1.
    pub sql_by_table: Vec<String>,
    pub table: TablePick,
    pub repeat: u32,
    pub count_rows: bool,
    pub params: Vec<ParamGen>,
}

pub struct Plan {
    pub transaction: bool,
    pub entries: Vec<Entry>,
    pub tables: u32,
    pub id_max: i64,
    pub slots: usize,
    /// Statements per completed event, BEGIN/COMMIT included.
    pub statements_per_event: u64,
    /// Statements per event whose rows are counted.
    pub counted_statements_per_event: u64,
}

impl Plan {
    pub fn compile(spec: &RunSpec) -> Result<Plan, DriverError> {
        let w = &spec.workload;
        if w.statements.is_empty() {
            return Err(DriverError::spec("workload.statements is empty"));
        }
        let mut vars: Vec<String> = Vec::new();
        let mut entries = Vec::with_capacity(w.statements.len());
        for (i, st) in w.statements.iter().enumerate() {
            let ctx = |m: String| DriverError::spec(format!("workload.statements[{i}]: {m}"));
            if st.repeat == 0 {
                return Err(ctx("repeat must be at least 1".into()));
            }
            if i == 0 && st.table == TablePick::Previous {
                return Err(ctx("table \"previous\" needs an earlier statement".into()));
            }
            let max = max_placeholder(&st.sql);
            if max != st.params.len() {
                return Err(ctx(format!(
                    "the SQL uses ${max} as its highest placeholder but {} params are given",
                    st.params.len()
                )));
            }
            let mut params = Vec::with_capacity(st.params.len());
            for p in &st.params {
                params.push(compile_param(p, &mut vars, w.id_max).map_err(ctx)?);
            }
            entries.push(Entry {
                sql_by_table: (1..=spec.tables)
                    .map(|t| st.sql.replace("{table}", &t.to_string()))
                    .collect(),
                table: st.table,
                repeat: st.repeat,
                count_rows: st.rows == RowsMode::Count,
                params,
            });
        }
        let repeats: u64 = entries.iter().map(|e| e.repeat as u64).sum();
        let counted: u64 = entries
            .iter()
            .filter(|e| e.count_rows)
            .map(|e| e.repeat as u64)
            .sum();
        Ok(Plan {
            transaction: w.transaction,
            tables: spec.tables,
            id_max: w.id_max,
            slots: vars.len(),
            statements_per_event: repeats + if w.transaction { 2 } else { 0 },
            counted_statements_per_event: counted,
            entries,
        })
    }
}

fn compile_param(p: &ParamSpec, vars: &mut Vec<String>, id_max: i64) -> Result<ParamGen, String> {
    let gen = match &p.gen {
        GenKind::Id if id_max < 1 => return Err("gen \"id\" needs workload.id_max >= 1".into()),
        GenKind::Id => Gen::Id,
        GenKind::Uniform { lo, hi } if lo > hi => return Err(format!("uniform lo {lo} > hi {hi}")),
        GenKind::Uniform { lo, hi } => Gen::Uniform { lo: *lo, hi: *hi },
        GenKind::Ref { var, plus } => match vars.iter().position(|v| v == var) {
            Some(slot) => Gen::Ref { slot, plus: *plus },
            None => {
                return Err(format!(
                    "ref to \"{var}\", which no earlier parameter saves with \"as\""
                ))
            }
        },
        GenKind::Int { value } => Gen::Int(*value),
        GenKind::Digits { groups } if *groups == 0 => return Err("digits needs groups >= 1".into()),
        GenKind::Digits { groups } => Gen::Digits(*groups),
    };
    let save = match &p.save_as {
        None => None,
        Some(_) if matches!(gen, Gen::Digits(_)) => {
            return Err("a digits value cannot be saved with \"as\"".into())
        }
        Some(name) => Some(match vars.iter().position(|v| v == name) {
            Some(i) => i,
            None => {
                vars.push(name.clone());
                vars.len() - 1
            }
        }),
    };
    Ok(ParamGen { gen, save })
}
