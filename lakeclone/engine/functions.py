"""The functions a statement may call: Spark's built-in functions that stay inside SQL's world.

Spark SQL can call Java (``reflect``, ``java_method``), read files through
a function's options (``from_protobuf``'s descriptor file, ``from_xml``'s
XSD path) and report the machine's state (``input_file_name``, ``version``).
A statement is SQL a tenant wrote, so lakeclone lets through only the
functions named here, by Spark's own grouping of its built-ins, less those;
anything else, and every function named through a qualifier
(``system.builtin.reflect``) or ``IDENTIFIER(...)``, is refused with
Snowflake's ``Unknown function``. A function sqlglot reads into a typed
expression is one it knows and writes for Spark by name (``UPPER``): it
needs no entry; a function lakeclone binds itself (``TABLE_CHANGES``,
``CURRENT_ROLE``) is gone from the statement before this check.

The list is Spark 4.2's built-ins (``FunctionRegistry.builtin`` and
``TableFunctionRegistry.builtin``, by Spark's groups) less the ``avro_funcs``
and ``protobuf_funcs`` groups, the functions above, ``python_worker_logs``,
and Spark's own ``current_database``, ``current_user``, ``user``,
``session_user``, ``current_catalog``, ``current_schema``, ``current_path``
and ``version``, which answer for Spark's session rather than lakeclone's.
"""

from __future__ import annotations

from sqlglot import exp

from lakeclone.errors import SqlCompilationError

_ALLOWED_TEXT = """
    # agg_funcs
    any any_value approx_count_distinct approx_percentile approx_top_k approx_top_k_accumulate approx_top_k_combine
    array_agg avg bit_and bit_or bit_xor bitmap_and_agg bitmap_construct_agg bitmap_or_agg bool_and bool_or
    collect_list collect_set corr count count_if count_min_sketch covar_pop covar_samp every first first_value
    grouping grouping_id histogram_numeric hll_sketch_agg hll_union_agg kll_merge_agg_bigint kll_merge_agg_double
    kll_merge_agg_float kll_sketch_agg_bigint kll_sketch_agg_double kll_sketch_agg_float kurtosis last last_value
    listagg max max_by mean measure median min min_by mode percentile percentile_approx percentile_cont
    percentile_disc regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
    skewness some std stddev stddev_pop stddev_samp string_agg sum theta_intersection_agg theta_sketch_agg
    theta_union_agg try_avg try_sum tuple_intersection_agg_double tuple_intersection_agg_integer
    tuple_sketch_agg_double tuple_sketch_agg_integer tuple_union_agg_double tuple_union_agg_integer var_pop var_samp
    variance
    # array_funcs
    array array_append array_compact array_contains array_distinct array_except array_insert array_intersect
    array_join array_max array_min array_position array_prepend array_remove array_repeat array_size array_union
    arrays_overlap arrays_zip flatten get sequence shuffle slice sort_array
    # bitwise_funcs
    bit_count bit_get getbit shiftleft shiftright shiftrightunsigned
    # collection_funcs
    cardinality concat element_at reverse size try_element_at
    # conditional_funcs
    between coalesce if ifnull nanvl nullif nullifzero nvl nvl2 when zeroifnull
    # conversion_funcs
    bigint binary boolean cast date decimal double float int smallint string time timestamp tinyint
    # csv_funcs
    from_csv schema_of_csv to_csv
    # datetime_funcs
    add_months convert_timezone curdate current_date current_time current_timestamp current_timezone date_add
    date_diff date_format date_from_unix_date date_part date_sub date_trunc dateadd datediff datepart day dayname
    dayofmonth dayofweek dayofyear extract from_unixtime from_utc_timestamp hour last_day localtimestamp make_date
    make_dt_interval make_interval make_time make_timestamp make_timestamp_ltz make_timestamp_ntz make_ym_interval
    minute month monthname months_between next_day now quarter second session_window time_bucket time_diff
    time_from_micros time_from_millis time_from_seconds time_to_micros time_to_millis time_to_seconds time_trunc
    timestamp_micros timestamp_millis timestamp_seconds to_date to_time to_timestamp to_timestamp_ltz
    to_timestamp_ntz to_unix_timestamp to_utc_timestamp trunc try_make_interval try_make_timestamp
    try_make_timestamp_ltz try_make_timestamp_ntz try_to_date try_to_time try_to_timestamp unix_date unix_micros
    unix_millis unix_seconds unix_timestamp weekday weekofyear window window_time year
    # generator_funcs
    explode explode_outer inline inline_outer posexplode posexplode_outer stack
    # hash_funcs
    crc32 hash md5 sha sha1 sha2 xxhash64
    # json_funcs
    from_json get_json_object json_array_length json_object_keys json_tuple schema_of_json to_json
    # lambda_funcs
    aggregate array_sort exists filter forall map_filter map_zip_with reduce transform transform_keys
    transform_values zip_with
    # map_funcs
    map map_concat map_contains_key map_entries map_from_arrays map_from_entries map_keys map_values str_to_map
    # math_funcs
    abs acos acosh asin asinh atan atan2 atanh bin bround cbrt ceil ceiling conv cos cosh cot csc degrees div e exp
    expm1 factorial floor greatest hex hypot least ln log log10 log1p log2 mod negative pi pmod positive pow power
    radians rand randn random rint round sec sign signum sin sinh sqrt tan tanh try_add try_divide try_mod
    try_multiply try_subtract unhex uniform width_bucket
    # misc_funcs
    aes_decrypt aes_encrypt assert_true bitmap_bit_position bitmap_bucket_number bitmap_count
    monotonically_increasing_id raise_error spark_partition_id try_aes_decrypt typeof uuid
    # predicate_funcs
    and equal_null ilike in isnan isnotnull isnull like not or regexp regexp_like rlike
    # sketch_funcs
    approx_top_k_estimate hll_sketch_estimate hll_union kll_sketch_get_n_bigint kll_sketch_get_n_double
    kll_sketch_get_n_float kll_sketch_get_quantile_bigint kll_sketch_get_quantile_double
    kll_sketch_get_quantile_float kll_sketch_get_rank_bigint kll_sketch_get_rank_double kll_sketch_get_rank_float
    kll_sketch_merge_bigint kll_sketch_merge_double kll_sketch_merge_float kll_sketch_to_string_bigint
    kll_sketch_to_string_double kll_sketch_to_string_float theta_difference theta_intersection theta_sketch_estimate
    theta_union tuple_difference_double tuple_difference_integer tuple_difference_theta_double
    tuple_difference_theta_integer tuple_intersection_double tuple_intersection_integer
    tuple_intersection_theta_double tuple_intersection_theta_integer tuple_sketch_estimate_double
    tuple_sketch_estimate_integer tuple_sketch_summary_double tuple_sketch_summary_integer tuple_sketch_theta_double
    tuple_sketch_theta_integer tuple_union_double tuple_union_integer tuple_union_theta_double
    tuple_union_theta_integer
    # st_funcs
    st_asbinary st_geogfromwkb st_geomfromwkb st_setsrid st_srid
    # string_funcs
    ascii base64 bit_length btrim char char_length character_length chr collate collation concat_ws contains decode
    elt encode endswith find_in_set format_number format_string initcap instr is_valid_utf8 lcase left len length
    levenshtein locate lower lpad ltrim luhn_check make_valid_utf8 mask octet_length overlay position printf quote
    randstr regexp_count regexp_extract regexp_extract_all regexp_instr regexp_replace regexp_substr repeat replace
    right rpad rtrim sentences soundex space split split_part startswith substr substring substring_index to_binary
    to_char to_number to_varchar translate trim try_to_binary try_to_number try_validate_utf8 ucase unbase64 upper
    validate_utf8
    # struct_funcs
    named_struct struct
    # url_funcs
    parse_url try_parse_url try_url_decode url_decode url_encode
    # variant_funcs
    is_valid_variant is_variant_null parse_json schema_of_variant schema_of_variant_agg to_variant_object
    try_parse_json try_variant_get variant_get
    # vector_funcs
    vector_avg vector_cosine_similarity vector_inner_product vector_l2_distance vector_norm vector_normalize
    vector_sum
    # window_funcs
    cume_dist dense_rank lag lead nth_value ntile percent_rank rank row_number
    # xml_funcs
    to_xml xpath xpath_boolean xpath_double xpath_float xpath_int xpath_long xpath_number xpath_short xpath_string
    # table-valued functions
    collations explode explode_outer inline inline_outer json_tuple posexplode posexplode_outer range sql_keywords
    stack variant_explode variant_explode_outer
"""

ALLOWED = frozenset(name for line in _ALLOWED_TEXT.splitlines() if not line.lstrip().startswith("#") for name in line.split())
"""The lower-case names of the functions a statement may call by name."""


def check_functions(expression: exp.Expr) -> None:
    """Refuse a call of any function not in :data:`ALLOWED`, as Snowflake refuses a function it does not know.

    Raises:
        SqlCompilationError: ``Unknown function <NAME>``.
    """
    for call in expression.find_all(exp.Anonymous, exp.AnonymousAggFunc):
        if call.name.lower() not in ALLOWED:
            raise SqlCompilationError(f"Unknown function {call.name.upper()}")
    for dot in expression.find_all(exp.Dot):
        # A qualified name reaches past the built-ins: a catalog's functions, or a built-in by another name.
        if isinstance(dot.expression, exp.Func):
            raise SqlCompilationError(f"Unknown function {dot.sql(dialect='snowflake').split('(')[0].upper()}")
    for dynamic in expression.find_all(exp.DynamicIdentifier):
        if dynamic.expressions:  # IDENTIFIER('f')(...): a function named by a string
            raise SqlCompilationError(f"Unknown function {dynamic.sql(dialect='snowflake').split('(')[0].upper()}")
