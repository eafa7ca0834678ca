# The compiled loop of cpplan.exact.dfs.fit (cpplan/exact/_dfs.c): the arrays as dfs._Search
# keeps them, in this order; returns what the call ended on (dfs.FEASIBLE ... dfs.GROW).
import numpy as np

def search(size: np.ndarray, align: np.ndarray, fixed: np.ndarray, sec_lo: np.ndarray,
           sec_hi: np.ndarray, keys: np.ndarray, heur: np.ndarray, nbr_ptr: np.ndarray,
           nbr_idx: np.ndarray, fl_ptr: np.ndarray, fl_mem: np.ndarray, H: int,
           maxmo: np.ndarray, any_fixed: bool, unit_align: bool, placed: np.ndarray,
           mo: np.ndarray, eff: np.ndarray, total: np.ndarray, cut: np.ndarray,
           floor: np.ndarray, sol: np.ndarray, reg: np.ndarray, frames: np.ndarray,
           nb_idx: np.ndarray, nb_old: np.ndarray, fl_idx: np.ndarray, fl_old: np.ndarray,
           mem: np.ndarray, cand: np.ndarray, scratch: np.ndarray, wide: bool, /) -> int: ...
