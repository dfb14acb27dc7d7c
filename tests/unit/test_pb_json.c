/* Protobuf messages as JSON by reflection (chain/wire/pb_json.h): every kind of
 * field a DiLoCo message has (strings, 32- and 64-bit integers, bytes,
 * enums, booleans, nested and repeated messages, repeated strings). */
#include <string.h>

#include "chain/wire/pb_json.h"
#include "gonka/diloco/v1/query.pb-c.h"
#include "gonka/diloco/v1/tx.pb-c.h"
#include "tests/support/testkit.h"

static const char *str_at(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static void test_scalars_and_bytes(void) {
    uint8_t root[3] = {0xfb, 0xff, 0x00};
    Gonka__Diloco__V1__MsgCommitRound m = GONKA__DILOCO__V1__MSG_COMMIT_ROUND__INIT;
    m.participant = "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc";
    m.run = 18446744073709551615ull; /* beyond 2^53: must stay exact */
    m.payload_leaves = 7;
    m.payload_root = (ProtobufCBinaryData){sizeof root, root};
    json_t *j = gd_pb_to_json(&m.base);
    CHECK(j != NULL);
    CHECK_STR_EQ(str_at(j, "participant"), "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc");
    CHECK_STR_EQ(str_at(j, "run"), "18446744073709551615");
    CHECK_STR_EQ(str_at(j, "round"), "0");
    CHECK(json_integer_value(json_object_get(j, "payload_leaves")) == 7);
    CHECK_STR_EQ(str_at(j, "payload_root"), "+/8A");
    CHECK_STR_EQ(str_at(j, "transcript_root"), "");
    CHECK(json_object_size(j) == gonka__diloco__v1__msg_commit_round__descriptor.n_fields);
    json_decref(j);
}

static void test_enums_nested_repeated(void) {
    Gonka__Diloco__V1__VerdictRecord v = GONKA__DILOCO__V1__VERDICT_RECORD__INIT;
    v.validator = "a";
    v.verdict = GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE;
    v.bonded = 1;
    Gonka__Diloco__V1__VerdictRecord *vs[1] = {&v};
    char *set[2] = {"x", "y"};
    Gonka__Diloco__V1__RoundWindows w = GONKA__DILOCO__V1__ROUND_WINDOWS__INIT;
    w.end = -3;
    Gonka__Diloco__V1__Round r = GONKA__DILOCO__V1__ROUND__INIT;
    r.windows = &w;
    r.phase = GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_VOID;
    r.inclusion_set = set;
    r.n_inclusion_set = 2;
    Gonka__Diloco__V1__QueryRoundResponse q = GONKA__DILOCO__V1__QUERY_ROUND_RESPONSE__INIT;
    q.round = &r;
    q.verdicts = vs;
    q.n_verdicts = 1;
    json_t *j = gd_pb_to_json(&q.base);
    CHECK(j != NULL);
    const json_t *round = json_object_get(j, "round");
    CHECK_STR_EQ(str_at(round, "phase"), "ROUND_PHASE_VOID");
    CHECK_STR_EQ(str_at(json_object_get(round, "windows"), "end"), "-3");
    const json_t *inc = json_object_get(round, "inclusion_set");
    CHECK(json_array_size(inc) == 2 && strcmp(json_string_value(json_array_get(inc, 1)), "y") == 0);
    const json_t *verdicts = json_object_get(j, "verdicts");
    CHECK(json_array_size(verdicts) == 1);
    CHECK_STR_EQ(str_at(json_array_get(verdicts, 0), "verdict"), "VERDICT_UNAVAILABLE");
    CHECK(json_is_true(json_object_get(json_array_get(verdicts, 0), "bonded")));
    CHECK(json_array_size(json_object_get(j, "commitments")) == 0);
    /* An absent nested message is null. */
    Gonka__Diloco__V1__QueryRoundResponse empty = GONKA__DILOCO__V1__QUERY_ROUND_RESPONSE__INIT;
    json_t *e = gd_pb_to_json(&empty.base);
    CHECK(e && json_is_null(json_object_get(e, "round")));
    json_decref(e);
    json_decref(j);
}

int main(void) {
    RUN_TEST(test_scalars_and_bytes);
    RUN_TEST(test_enums_nested_repeated);
    return gd_test_finish();
}
