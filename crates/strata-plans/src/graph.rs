//! The dependency graph of a plan: levels and cycles, in time linear in steps and edges.

/// The levels of a graph given each node's dependencies (`deps[i]`, indexes into the same
/// list): level 0 holds the nodes with no dependencies, level k the nodes whose
/// dependencies are all in levels below k; within a level, index order. `Err` holds a
/// cycle when there is one: its nodes in the direction data flows (`a -> b`: `b` depends
/// on `a`), starting at its first node in index order.
pub fn levels(deps: &[Vec<usize>]) -> Result<Vec<Vec<usize>>, Vec<usize>> {
    let n = deps.len();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut unmet = vec![0usize; n];
    for (i, ds) in deps.iter().enumerate() {
        unmet[i] = ds.len();
        for &d in ds {
            dependents[d].push(i);
        }
    }
    let mut level = vec![0usize; n];
    let mut queue: Vec<usize> = (0..n).filter(|&i| unmet[i] == 0).collect();
    let mut head = 0;
    while head < queue.len() {
        let i = queue[head];
        head += 1;
        for &j in &dependents[i] {
            level[j] = level[j].max(level[i] + 1);
            unmet[j] -= 1;
            if unmet[j] == 0 {
                queue.push(j);
            }
        }
    }
    if queue.len() < n {
        return Err(find_cycle(deps, &unmet));
    }
    let depth = level.iter().max().map_or(0, |m| m + 1);
    let mut out = vec![Vec::new(); depth];
    for (i, l) in level.into_iter().enumerate() {
        out[l].push(i);
    }
    Ok(out)
}

/// A cycle among the nodes left with unmet dependencies, in the direction data flows
/// (`a -> b`: `b` depends on `a`), starting at its first node in index order.
fn find_cycle(deps: &[Vec<usize>], unmet: &[usize]) -> Vec<usize> {
    let stuck = |i: usize| unmet[i] > 0;
    let Some(start) = (0..deps.len()).find(|&i| stuck(i)) else {
        return Vec::new();
    };
    // Every stuck node has a stuck dependency: walking them must repeat a node.
    let mut seen = vec![usize::MAX; deps.len()];
    let mut walk = Vec::new();
    let mut cur = start;
    while seen[cur] == usize::MAX {
        seen[cur] = walk.len();
        walk.push(cur);
        match deps[cur].iter().copied().find(|&d| stuck(d)) {
            Some(next) => cur = next,
            None => return vec![cur, cur],
        }
    }
    let mut cycle: Vec<usize> = walk[seen[cur]..].to_vec();
    cycle.reverse();
    let first = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
    cycle.rotate_left(first);
    cycle.push(cycle[0]);
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exercise_and_the_diamond() {
        // Seed 001's exercise: B uses A, C uses B, D uses A and C.
        assert_eq!(
            levels(&[vec![], vec![0], vec![1], vec![0, 2]]),
            Ok(vec![vec![0], vec![1], vec![2], vec![3]])
        );
        // A -> {B, C} -> D.
        assert_eq!(
            levels(&[vec![], vec![0], vec![0], vec![1, 2]]),
            Ok(vec![vec![0], vec![1, 2], vec![3]])
        );
        // A dependency later in plan order is fine.
        assert_eq!(levels(&[vec![1], vec![]]), Ok(vec![vec![1], vec![0]]));
        assert_eq!(levels(&[]), Ok(vec![]));
    }

    #[test]
    fn cycles_are_named_from_their_first_step_in_the_direction_data_flows() {
        // a, b needs c, c needs b.
        assert_eq!(levels(&[vec![], vec![2], vec![1]]), Err(vec![1, 2, 1]));
        // a needs c, b needs a, c needs b: a -> b -> c -> a.
        assert_eq!(levels(&[vec![2], vec![0], vec![1]]), Err(vec![0, 1, 2, 0]));
        // A step downstream of a cycle is not part of it.
        assert_eq!(levels(&[vec![2], vec![2], vec![1]]), Err(vec![1, 2, 1]));
        assert_eq!(levels(&[vec![0]]), Err(vec![0, 0]));
    }

    #[test]
    fn a_long_chain_is_levelled_without_recursion() {
        let n = 100_000;
        let deps: Vec<Vec<usize>> = (0..n)
            .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
            .collect();
        let l = levels(&deps).unwrap();
        assert_eq!(l.len(), n);
        assert_eq!(l[n - 1], vec![n - 1]);
    }
}
