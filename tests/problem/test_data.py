import warnings

import numpy as np
import pytest

from pac_particles.problem.data import check_lam, validate_xy
from pac_particles.problem.datasets import load_csv, load_dataset
from pac_particles.problem.row_pools import InMemoryRows, window_order


def _xy(n=20, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.arange(n) % 2
    return X, y


@pytest.mark.parametrize("mutate, message", [
    (lambda X, y: (np.where(np.eye(*X.shape, dtype=bool), np.nan, X), y), "NaN"),
    (lambda X, y: (np.where(np.eye(*X.shape, dtype=bool), np.inf, X), y), "infinite"),
    (lambda X, y: (X, np.ones_like(y)), "one class"),
    (lambda X, y: (X, np.arange(len(y)) % 3), "binary"),
    (lambda X, y: (X, y[:-1]), "rows but y has"),
    (lambda X, y: (X[:, 0], y), "2-D"),
    (lambda X, y: (X, y.astype(float) * np.nan), "NaN"),
    (lambda X, y: (np.ones_like(X), y), "every column of X is constant"),
    (lambda X, y: (X.astype(str).astype(object) + "x", y), "numeric"),
])
def test_validator_names_the_problem(mutate, message):
    X, y = mutate(*_xy())
    with pytest.raises(ValueError, match=message):
        validate_xy(X, y)


@pytest.mark.parametrize("lam", [0, -1.0, np.nan, np.inf, "abc", None])
def test_lam_must_be_finite_positive(lam):
    with pytest.raises(ValueError, match="lam"):
        check_lam(lam)


def test_positives_are_the_larger_label():
    X, y = _xy()
    for labels in (y, 2 * y - 1, y.astype(bool), y + 5):
        data = validate_xy(X, labels)
        assert np.array_equal(data.y, y == 1)
        assert np.array_equal(data.X_pos, X[y == 1])
        assert np.array_equal(data.X_neg, X[y == 0])
        assert data.n_pairs == 10 * 10


def test_constant_columns_are_dropped_with_a_warning():
    X, y = _xy()
    X = np.column_stack([np.ones(len(y)), X, np.full(len(y), 3.0)])
    with pytest.warns(UserWarning, match="constant"):
        data = validate_xy(X, y)
    assert data.d == 3 and list(data.columns) == [1, 2, 3]
    np.testing.assert_array_equal(data.transform(X), X[:, 1:4])


def test_standardisation_is_replayed_on_new_inputs():
    X, y = _xy(d=4)
    X = X * [1, 10, 100, 1000] + 7
    data = validate_xy(X, y, standardize=True)
    np.testing.assert_allclose(data.X.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(data.X.std(axis=0), 1, atol=1e-12)
    np.testing.assert_allclose(data.transform(X), data.X)
    with pytest.raises(ValueError, match="columns"):
        data.transform(X[:, :2])


def test_no_warning_without_constant_columns():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate_xy(*_xy())


@pytest.mark.parametrize("name, shape, n_pos", [
    ("pima", (768, 8), 268), ("sonar", (208, 60), 97), ("liver", (579, 10), 414),
    ("breast_cancer", (569, 30), 212), ("eeg", (14980, 14), 6723),
])
def test_builtin_loaders_return_raw_features_and_01_labels(name, shape, n_pos):
    X, y, _ = load_dataset(name)
    assert X.shape == shape
    assert set(np.unique(y)) == {0, 1} and y.sum() == n_pos
    assert not np.all(X[:, 0] == 1)  # no intercept column


def test_unknown_dataset_is_a_value_error():
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("iris")


def test_csv_loader_takes_the_target_by_name(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,label,b\n1,0,2\n3,1,4\n5,0,6\n")
    X, y, names = load_csv(path, target="label")
    assert names == ["a", "b"] and y.tolist() == [0, 1, 0]
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6]])
    X, y, names = load_csv(path)  # default: last column
    assert names == ["a", "label"] and y.tolist() == [2, 4, 6]
    with pytest.raises(ValueError, match="not in the header"):
        load_csv(path, target="class")


# ------------------------------------------------- extreme values, odd files

@pytest.mark.parametrize("factor", [1e200, 1e-300, 1e300])
def test_huge_or_tiny_columns_standardise_like_unit_ones(factor):
    # X * 1e200 used to overflow the standard deviation: every column was
    # then left unscaled and the models saw inf
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = X[:, 0] + rng.standard_normal(30) > 0
    ref = validate_xy(X, y, standardize=True)
    data = validate_xy(X * factor, y, standardize=True)
    np.testing.assert_allclose(data.X, ref.X, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(data.transform(X[:4] * factor), ref.X[:4],
                               rtol=1e-12, atol=1e-12)


def test_values_too_large_without_standardising_are_refused():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 2)) * 1e200
    with pytest.raises(ValueError, match="too large.*standardize=True"):
        validate_xy(X, np.arange(20) % 2, standardize=False)
    # beyond what (x - mean) can hold even after scaling: refused, not inf
    X = np.array([[1.7e308, 0.0], [-1.7e308, 1.0], [-1.7e308, 2.0],
                  [-1.7e308, 3.0]])
    with pytest.raises(ValueError, match="too large"):
        validate_xy(X, [0, 1, 0, 1], standardize=True)


def test_csv_with_a_byte_order_mark(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b,y\n1,2,0\n3,4,1\n5,1,0\n")
    X, y, names = load_csv(path, target="y")
    assert names == ["a", "b"] and X.shape == (3, 2)
    assert load_csv(path, target="y")[2][0] == "a"


def test_binary_or_empty_csv_is_an_input_error_naming_the_file(tmp_path):
    binary = tmp_path / "model.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError, match="model.bin"):
        load_csv(binary)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty.csv is empty"):
        load_csv(empty)
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b,y\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no numpy warning on the way
        with pytest.raises(ValueError, match="no data rows"):
            load_csv(header_only)


# ------------------------------------------------ CSVs through pandas, labels

def test_csv_errors_name_the_column_and_the_data_row(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,y\n1,2,0\n2,3,1\n3,NA,0\n4,x,1\n")
    with pytest.raises(ValueError, match=r"column 'b' has no value in data "
                                         r"row 3 \(2 rows in all\)"):
        load_csv(path)
    path.write_text("a,b,y\n1,2,0\n2,3,1\n3,4,0\n4,x,1\n")
    with pytest.raises(ValueError, match="column 'b' is not numeric: data "
                                         "row 4 holds 'x'"):
        load_csv(path)


def test_csv_options_pick_separator_header_and_columns(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id;a;y;b\nr1;1;0;2\nr2;3;1;4\nr3;5;0;7\n")
    X, y, names = load_csv(path, target="y", delimiter=";", drop=["id"])
    assert names == ["a", "b"] and y.tolist() == [0, 1, 0]
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 7]])
    X, _, names = load_csv(path, target="3", delimiter=";", features="b,a")
    assert names == ["b", "a"] and X[:, 0].tolist() == [2, 4, 7]
    bare = tmp_path / "bare.csv"
    bare.write_text("1,0,2\n3,1,4\n")
    X, y, names, target = load_csv(bare, header=False, target="2",
                                   return_target=True)
    assert names == ["col1", "col3"] and target == "col2"
    assert y.tolist() == [0, 1]


def test_an_unnamed_first_column_is_taken_as_an_index(tmp_path):
    from pac_particles.problem.datasets import CSVIndexWarning
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "y": [0, 1, 0]},
                         index=[10, 11, 12])
    frame.to_csv(tmp_path / "d.csv")
    with pytest.warns(CSVIndexWarning, match="row index"):
        X, y, names = load_csv(tmp_path / "d.csv")
    assert names == ["a"] and X[:, 0].tolist() == [1, 2, 3]


def test_string_labels_are_encoded_with_the_documented_rule():
    from pac_particles.problem.datasets import LabelChoiceWarning, encode_labels
    with pytest.warns(LabelChoiceWarning, match="'yes' .*lexicographically"):
        codes, classes = encode_labels(np.array(["no", "yes", "no"], object))
    assert codes.tolist() == [0, 1, 0] and classes == ["no", "yes"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        codes, classes = encode_labels(np.array(["no", "yes", "no"], object),
                                       positive_label="no")
    assert codes.tolist() == [1, 0, 1] and classes == ["yes", "no"]
    # numbers: the larger, and "1" names 1.0
    codes, classes = encode_labels(np.array([-1.0, 1.0, 1.0]))
    assert codes.tolist() == [0, 1, 1] and classes == [-1, 1]
    codes, classes = encode_labels(np.array([0.0, 1.0]), positive_label="0")
    assert codes.tolist() == [1, 0] and classes == [1, 0]
    with pytest.raises(ValueError, match="'2' is not one of the labels"):
        encode_labels(np.array([0.0, 1.0]), positive_label="2")
    with pytest.raises(ValueError, match="one class only"):
        encode_labels(np.array(["a", "a"], object))
    with pytest.raises(ValueError, match="binary"):
        encode_labels(np.array(["a", "b", "c"], object))


def test_both_standardisation_paths_give_the_same_design():
    """One copy of X where the columns' range cannot overflow; the careful
    path (columns divided by their largest value first) where it can: the
    same centring and scaling, to rounding."""
    import numpy as np
    from pac_particles.problem.data import validate_xy
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)) * [1.0, 50.0, 0.01] + [3.0, -7.0, 0.5]
    y = rng.integers(0, 2, size=500)
    given = X.copy()
    fast = validate_xy(X, y, standardize=True)
    np.testing.assert_array_equal(X, given)        # the input is not modified
    careful = validate_xy(np.column_stack([X, 1e200 * X[:, 0]]), y,
                          standardize=True)
    np.testing.assert_allclose(careful.X[:, :3], fast.X, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fast.X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(fast.X.std(axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(fast.center, X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(careful.X[:, 3], careful.X[:, 0], rtol=1e-10,
                               atol=1e-12)


def test_a_constant_column_kept_standardises_to_zero_with_scale_one():
    """drop_constant=False keeps a constant column: centred to exactly 0,
    scale 1, whatever the rounding of its mean (the old path's result)."""
    import numpy as np
    from pac_particles.problem.data import validate_xy
    rng = np.random.default_rng(5)
    X = rng.normal(size=(37, 2))
    X[:, 1] = (1.5 - 0.37) / 0.91              # not a round number
    data = validate_xy(X, rng.integers(0, 2, size=37), standardize=True,
                       drop_constant=False)
    assert np.all(data.X[:, 1] == 0.0) and data.scale[1] == 1.0
    assert data.center[1] == X[0, 1]


def test_parts_of_the_rows_are_gathered_from_the_class_ordered_copy():
    """rows(mask) is X[mask] and class_rows(mask) its positives then its
    negatives, read from the class-ordered copy without building X in
    input order; by_class() is the same rows with that copy as X."""
    X, y = _xy(n=41, d=3, seed=2)
    y = np.random.default_rng(3).random(41) < 0.3
    mask = np.random.default_rng(4).random(41) < 0.5
    data = validate_xy(X, y, standardize=True)
    reference = (X - X.mean(axis=0)) / X.std(axis=0)
    np.testing.assert_allclose(data.rows(mask), reference[mask], atol=1e-12)
    rows, n_pos = data.class_rows(mask)
    assert n_pos == np.count_nonzero(mask & y)
    np.testing.assert_allclose(rows[:n_pos], reference[mask & y], atol=1e-12)
    np.testing.assert_allclose(rows[n_pos:], reference[mask & ~y], atol=1e-12)
    by_class = data.by_class()
    assert by_class.X is data.ordered and by_class.n_pos == data.n_pos
    np.testing.assert_array_equal(by_class.X[by_class.y], data.X_pos)
    assert "X" not in data.__dict__          # never built in input order
    # once built, X itself is read: the same rows
    np.testing.assert_array_equal(data.X[mask], data.rows(mask))
    built, _ = data.class_rows(mask)
    np.testing.assert_array_equal(built, rows)


def test_new_rows_are_scaled_like_the_training_rows_and_never_modified():
    """transform with every column kept (no selecting copy) and with one
    dropped: the training scaling; the input left as given; NaN in new rows
    is refused, not passed on."""
    X, y = _xy(d=3)
    data = validate_xy(X, y, standardize=True)
    given = X.copy()
    np.testing.assert_allclose(data.transform(X),
                               (given - X.mean(axis=0)) / X.std(axis=0),
                               atol=1e-12)
    np.testing.assert_array_equal(X, given)
    X[:, 1] = 2.0
    with pytest.warns(UserWarning, match="constant"):
        dropped = validate_xy(X, y, standardize=True)
    np.testing.assert_allclose(dropped.transform(X)[:, 1],
                               (X[:, 2] - X[:, 2].mean()) / X[:, 2].std(),
                               atol=1e-12)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        data.transform(X)


@pytest.mark.parametrize("n", [1, 255, 512, 1000])
def test_column_extremes_are_numpys_column_min_and_max(n):
    # slabs of 256 rows, a tail, a NaN, an infinity, a Fortran-ordered copy
    from pac_particles.problem.data import column_extremes
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 5)) * [1, 1e-200, 1e200, 1, 1]
    X[-1, 3], X[n // 2, 4] = np.nan, -np.inf
    for table in (X, np.asfortranarray(X)):
        low, high = column_extremes(table)
        np.testing.assert_array_equal(low, X.min(axis=0))
        np.testing.assert_array_equal(high, X.max(axis=0))


@pytest.mark.parametrize("standardize", [True, False])
def test_a_part_of_the_data_is_the_validated_data_of_its_rows(standardize):
    # what validate_xy of the part's raw rows gives, to rounding: the rows
    # (class order, each class in the pair windows' fixed order of its own
    # rows), the labels, and new rows mapped to the same values
    rng = np.random.default_rng(3)
    X = rng.normal(size=(700, 4)) * [1.0, 5.0, 0.01, 2.0] + [0.0, 3.0, -1.0, 7.0]
    y = rng.random(700) < 0.3
    mask = rng.random(700) < 0.8
    data = validate_xy(X, y, standardize=standardize)
    part = data.part(mask, standardize)
    ref = validate_xy(X[mask], y[mask], standardize=standardize)
    np.testing.assert_allclose(part.X_pos, ref.X_pos[window_order(ref.n_pos)],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(part.X_neg, ref.X_neg[window_order(ref.n_neg)],
                               rtol=0, atol=1e-12)
    assert part.n_pos == ref.n_pos and part.n_neg == ref.n_neg
    assert part.window_ordered and not data.window_ordered
    np.testing.assert_array_equal(part.X[part.y], part.X_pos)
    new = rng.normal(size=(30, 4)) * 3
    np.testing.assert_allclose(part.transform(new), ref.transform(new),
                               rtol=0, atol=1e-12)
    if standardize:
        np.testing.assert_allclose(np.concatenate(
            [part.X_pos, part.X_neg]).std(axis=0), 1.0, atol=1e-12)
    # the full data are left as they were
    np.testing.assert_array_equal(data.X, validate_xy(X, y, standardize).X)


def test_a_column_constant_on_a_part_is_kept_at_zero():
    # validate_xy of the part's rows would drop it (no pair differs in it)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    y = np.arange(200) % 3 == 0
    mask = np.arange(200) < 150
    X[mask, 1] = 2.5
    part = validate_xy(X, y, standardize=True).part(mask, True)
    assert part.d == 3
    np.testing.assert_array_equal(part.X[:, 1], 0.0)
    np.testing.assert_allclose(part.transform(X[mask])[:, 1], 0.0, atol=1e-12)
    assert part.scale[1] > 0 and np.isfinite(part.center[1])


def test_a_part_pairs_its_own_rows_in_the_windows_of_its_shuffled_copy():
    """The part's rows are its pair windows' copy (no second gather), and
    its windows read the pairs the windows of its rows in input order
    would: row for row, whatever the steps' starts. A part in input order
    (a wrong variant) reads other rows."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3))
    y = rng.random(400) < 0.3
    mask = rng.random(400) < 0.8
    data = validate_xy(X, y)
    part = data.part(mask)
    source = part.pair_source(np.random.default_rng(0), 50)
    assert source.shuffled[0] is part.X_pos
    assert source.shuffled[1] is part.X_neg
    ref = validate_xy(X[mask], y[mask])
    ref_source = ref.pair_source(np.random.default_rng(0), 50)
    wrong = InMemoryRows(ref.X_pos, ref.X_neg, np.random.default_rng(0),
                         (ref.X_pos, ref.X_neg))
    for _ in range(30):
        pos, neg, ip, jn = source.pairs(50)
        ref_pos, ref_neg, ref_ip, ref_jn = ref_source.pairs(50)
        np.testing.assert_array_equal(pos[ip], ref_pos[ref_ip])
        np.testing.assert_array_equal(neg[jn], ref_neg[ref_jn])
        wrong_pos, _, wrong_ip, _ = wrong.pairs(50)
        assert not np.array_equal(pos[ip], wrong_pos[wrong_ip])


@pytest.mark.parametrize("standardize", [False, True])
def test_rows_stored_in_the_windows_order_read_as_the_input_order(standardize):
    """With ``window_rows``, each class is stored in the order its pair
    windows read (the shuffled copy of the class in input order, so a fit
    makes none), and every reading of the rows in input order, by class,
    as a part or as scores is that of the data stored by class in input
    order. Data stored by class (a wrong variant) read other rows."""
    from pac_particles.problem.risks import AUCRisk
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 4))
    y = rng.random(300) < 0.3
    mask = rng.random(300) < 0.6
    ref = validate_xy(X, y, standardize=standardize)
    data = validate_xy(X, y, standardize=standardize, window_rows=300)
    assert data.window_ordered and not ref.window_ordered
    assert validate_xy(X, y, window_rows=301).positions is None
    with pytest.raises(ValueError, match="window_rows"):
        validate_xy(X, y, window_rows=0)
    close = dict(rtol=0, atol=1e-12)
    np.testing.assert_allclose(data.X_pos, ref.X_pos[window_order(ref.n_pos)],
                               **close)
    np.testing.assert_allclose(data.X_neg, ref.X_neg[window_order(ref.n_neg)],
                               **close)
    assert not np.allclose(data.X_pos, ref.X_pos)
    # the windows read the stored rows themselves: the pairs of the
    # shuffled copy of the class in input order
    source = data.pair_source(np.random.default_rng(0), 50)
    assert source.shuffled[0] is data.X_pos
    ref_source = ref.pair_source(np.random.default_rng(0), 50)
    for _ in range(10):
        pos, neg, ip, jn = source.pairs(50)
        ref_pos, ref_neg, ref_ip, ref_jn = ref_source.pairs(50)
        np.testing.assert_allclose(pos[ip], ref_pos[ref_ip], **close)
        np.testing.assert_allclose(neg[jn], ref_neg[ref_jn], **close)
    np.testing.assert_allclose(data.rows(mask), ref.rows(mask), **close)
    rows, n_pos = data.class_rows(mask)
    ref_rows, ref_n_pos = ref.class_rows(mask)
    assert n_pos == ref_n_pos
    np.testing.assert_allclose(rows, ref_rows, **close)
    w = rng.normal(size=4)
    np.testing.assert_allclose(data.class_scores(w, mask), ref_rows @ w,
                               **close)
    np.testing.assert_allclose(ref.class_scores(w, mask), ref_rows @ w,
                               **close)
    part, ref_part = data.part(mask), ref.part(mask)
    np.testing.assert_allclose(part.ordered, ref_part.ordered, **close)
    assert "X" not in data.__dict__          # none of these built it
    np.testing.assert_allclose(data.X, ref.X, **close)
    risk = AUCRisk(data.y)
    np.testing.assert_allclose(data.in_risk_order(risk),
                               ref.in_risk_order(risk), **close)
    by_class = data.by_class()
    assert by_class.X is data.ordered and by_class.positions is None
