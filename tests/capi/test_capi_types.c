/* peak_type against ggml's numbering of tensor types: the values and names below
   are those of enum ggml_type in ggml's ggml.h (GGML_TYPE_F32 = 0 ...
   GGML_TYPE_MXFP4 = 39), the numbers GGUF files store. */
#include "capi_test.h"
#include "peak/peak.h"

typedef struct {
  peak_type type;
  int ggml_id;
  const char* ggml_name;
} ggml_type_row;

static const ggml_type_row kGgmlTypes[] = {
    {PEAK_TYPE_F32, 0, "F32"},         {PEAK_TYPE_F16, 1, "F16"},          {PEAK_TYPE_Q4_0, 2, "Q4_0"},
    {PEAK_TYPE_Q4_1, 3, "Q4_1"},       {PEAK_TYPE_Q5_0, 6, "Q5_0"},        {PEAK_TYPE_Q5_1, 7, "Q5_1"},
    {PEAK_TYPE_Q8_0, 8, "Q8_0"},       {PEAK_TYPE_Q8_1, 9, "Q8_1"},        {PEAK_TYPE_Q2_K, 10, "Q2_K"},
    {PEAK_TYPE_Q3_K, 11, "Q3_K"},      {PEAK_TYPE_Q4_K, 12, "Q4_K"},       {PEAK_TYPE_Q5_K, 13, "Q5_K"},
    {PEAK_TYPE_Q6_K, 14, "Q6_K"},      {PEAK_TYPE_Q8_K, 15, "Q8_K"},       {PEAK_TYPE_IQ2_XXS, 16, "IQ2_XXS"},
    {PEAK_TYPE_IQ2_XS, 17, "IQ2_XS"},  {PEAK_TYPE_IQ3_XXS, 18, "IQ3_XXS"}, {PEAK_TYPE_IQ1_S, 19, "IQ1_S"},
    {PEAK_TYPE_IQ4_NL, 20, "IQ4_NL"},  {PEAK_TYPE_IQ3_S, 21, "IQ3_S"},     {PEAK_TYPE_IQ2_S, 22, "IQ2_S"},
    {PEAK_TYPE_IQ4_XS, 23, "IQ4_XS"},  {PEAK_TYPE_I8, 24, "I8"},           {PEAK_TYPE_I16, 25, "I16"},
    {PEAK_TYPE_I32, 26, "I32"},        {PEAK_TYPE_I64, 27, "I64"},         {PEAK_TYPE_F64, 28, "F64"},
    {PEAK_TYPE_IQ1_M, 29, "IQ1_M"},    {PEAK_TYPE_BF16, 30, "BF16"},       {PEAK_TYPE_TQ1_0, 34, "TQ1_0"},
    {PEAK_TYPE_TQ2_0, 35, "TQ2_0"},    {PEAK_TYPE_MXFP4, 39, "MXFP4"},
};

/* Ids ggml.h lists as removed, with the names it gives them. */
static const ggml_type_row kRetired[] = {
    {(peak_type)4, 4, "Q4_2"},          {(peak_type)5, 5, "Q4_3"},          {(peak_type)31, 31, "Q4_0_4_4"},
    {(peak_type)32, 32, "Q4_0_4_8"},    {(peak_type)33, 33, "Q4_0_8_8"},    {(peak_type)36, 36, "IQ4_NL_4_4"},
    {(peak_type)37, 37, "IQ4_NL_4_8"},  {(peak_type)38, 38, "IQ4_NL_8_8"},
};

static void check_rows(const ggml_type_row* rows, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    CHECK((int)rows[i].type == rows[i].ggml_id);
    const char* name = peak_type_name(rows[i].type);
    CHECK(name != NULL && strcmp(name, rows[i].ggml_name) == 0);
    if (name == NULL || strcmp(name, rows[i].ggml_name) != 0) {
      fprintf(stderr, "  id %d: peak_type_name gives %s, ggml calls it %s\n", rows[i].ggml_id, name ? name : "NULL",
              rows[i].ggml_name);
    }
  }
}

int main(void) {
  check_rows(kGgmlTypes, sizeof kGgmlTypes / sizeof kGgmlTypes[0]);
  check_rows(kRetired, sizeof kRetired / sizeof kRetired[0]);
  CHECK(strcmp(peak_type_name((peak_type)40), "unknown") == 0);
  CHECK(strcmp(peak_type_name((peak_type)-1), "unknown") == 0);
  CHECK(strcmp(peak_type_name((peak_type)4000), "unknown") == 0);
  /* A peak_type has the size of the uint32_t field it replaced. */
  CHECK(sizeof(peak_type) == 4);
  return capi_test_summary("capi_types_test");
}
