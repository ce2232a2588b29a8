//===- OutputOverlapTest.cpp - every output of every call form -----------===//
//
// A kernel's CTAs write their tiles at once: an output whose elements share
// addresses is a write race. Every call form (batched, FP8, paged, varlen,
// varlen paged, split-KV, quantized; the backward) is called validly, then
// once per output and per dimension of size > 1 with that dimension's
// stride 0: each must be refused, naming the output and the dimension.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

#include <functional>

using namespace attn::bundle;
using namespace attn::testing;

namespace {

/// A call of one form against a bundle of its one kernel.
struct Form {
  std::string name;
  KernelEntry kernel;
  attn_fwd_args args = {};
  attn_bwd_args bwd = {};
  bool backward = false;
};

/// gtest prints a failing parameter by its name.
void PrintTo(const Form &form, std::ostream *os) { *os << form.name; }

std::vector<Form> forms() {
  std::vector<Form> f;
  f.push_back({"batched", fwdKernel("k", /*lse=*/true),
               makeArgs(2, 8, 2, 128, 96, 128, /*lse=*/true)});
  f.push_back({"fp8", fp8Kernel("k"), makeFp8Args(2, 8, 2, 128, 96)});
  f.push_back(
      {"paged", pagedKernel("k", 16), makePagedArgs(2, 8, 2, 64, 8, 16, 4)});
  f.push_back({"varlen", varlenKernel("k"),
               makeVarlenArgs(2, 32, 8, 100, 120, 64, 64)});
  f.push_back({"varlen paged", varlenPagedKernel("k", 16),
               makeVarlenPagedArgs(2, 32, 8, 100, 64, 64, 8, 16, 4)});
  f.push_back({"split-KV", splitKernel("k", 4),
               makeArgs(2, 8, 2, 128, 96, 128, /*lse=*/true)});
  Form quantized{"quantized", quantizedKernel("k"),
                 makeArgs(1, 4, 2, 100, 128, 128, /*lse=*/true)};
  quantized.args.quantize = ATTN_QUANTIZE_FP8;
  f.push_back(quantized);
  Form bwd{"backward", bwdKernel("k")};
  bwd.bwd = makeBwdArgs();
  bwd.backward = true;
  f.push_back(bwd);
  return f;
}

/// The outputs of a call of `form`, by name.
std::vector<std::pair<std::string, attn_tensor *>> outputs(Form &form) {
  if (form.backward)
    return {{"dq", &form.bwd.dq}, {"dk", &form.bwd.dk}, {"dv", &form.bwd.dv}};
  std::vector<std::pair<std::string, attn_tensor *>> out = {
      {"o", &form.args.o}};
  if (form.args.lse.rank)
    out.push_back({"lse", &form.args.lse});
  return out;
}

class OutputOverlap : public ::testing::TestWithParam<Form> {
protected:
  void SetUp() override {
    form = GetParam();
    owner.bundle = loadBundle(dir, manifestOf({form.kernel}));
    ASSERT_NE(owner.bundle, nullptr);
  }
  attn_status select() {
    int64_t index = -1;
    return form.backward ? attn_bwd_select(owner.bundle, &form.bwd, &index)
                         : attn_fwd_select(owner.bundle, &form.args, &index);
  }
  Form form;
  TempDir dir;
  BundleOwner owner{nullptr};
};

TEST_P(OutputOverlap, EveryOutputDimensionWithStrideZeroIsRefused) {
  EXPECT_STATUS(select(), ATTN_SUCCESS, "");
  Form valid = form;
  for (size_t i = 0; i < outputs(valid).size(); ++i) {
    for (int32_t d = 0; d < outputs(valid)[i].second->rank; ++d) {
      form = valid;
      auto [name, t] = outputs(form)[i];
      if (t->sizes[d] < 2)
        continue;
      t->strides[d] = 0;
      SCOPED_TRACE(name + " dim " + std::to_string(d));
      // D's unit stride is a layout rule of its own, checked first.
      bool unitD = name != "lse" && d == t->rank - 1;
      EXPECT_STATUS(select(), kInvalid,
                    unitD ? name + ": stride along D must be 1"
                          : name + ": dim " + std::to_string(d) + " (size " +
                                std::to_string(t->sizes[d]) + ") has stride 0");
    }
  }
}

/// A stride too small for the dimensions inside it: the rows of O 8
/// elements apart while each is D = 128 (or 64) long.
TEST_P(OutputOverlap, RowStrideInsideARowIsRefused) {
  auto [name, t] = outputs(form)[0];
  int32_t row = t->rank - 2; // the dimension outside D (varlen: heads)
  t->strides[row] = 8;
  EXPECT_STATUS(select(), kInvalid,
                name + ": dim " + std::to_string(row) + " (size " +
                    std::to_string(t->sizes[row]) +
                    ") has stride 8, inside the");
}

INSTANTIATE_TEST_SUITE_P(AllForms, OutputOverlap, ::testing::ValuesIn(forms()),
                         [](const ::testing::TestParamInfo<Form> &info) {
                           std::string name = info.param.name;
                           for (char &c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return name;
                         });

/// The cases by name: LSE strides {0, 0, 0}, dK's row stride 0.
TEST(OutputOverlapCases, LseStridesAllZero) {
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({fwdKernel("k", true)}))};
  attn_fwd_args args = makeArgs(1, 8, 8, 128, 128, 128, /*lse=*/true);
  args.lse.strides[0] = args.lse.strides[1] = args.lse.strides[2] = 0;
  int64_t index = -1;
  EXPECT_STATUS(attn_fwd_select(owner.bundle, &args, &index), kInvalid,
                "lse: dim 1 (size 8) has stride 0: elements share addresses, "
                "but an output needs one address per element (sizes [1, 8, "
                "128], strides [0, 0, 0])");
}

TEST(OutputOverlapCases, DkRowStrideZero) {
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({bwdKernel("g")}))};
  attn_bwd_args args = makeBwdArgs();
  args.dk.strides[2] = 0;
  int64_t index = -1;
  EXPECT_STATUS(attn_bwd_select(owner.bundle, &args, &index), kInvalid,
                "dk: dim 2 (size 300) has stride 0");
}

/// What stays valid: permuted layouts ([B, N, H, D] viewed as [B, H, N,
/// D]), a dimension of size 1 with any stride, inputs that repeat
/// elements (K broadcast over heads).
TEST(OutputOverlapCases, NestedLayoutsAndBroadcastInputsPass) {
  TempDir dir;
  BundleOwner owner{loadBundle(dir, manifestOf({fwdKernel("k", true)}))};
  attn_fwd_args args = makeArgs(2, 8, 8, 128, 128, 128, /*lse=*/true);
  args.o = bnhdView(args.o.data, 2, 8, 128, 128);
  args.lse.strides[0] = 1;
  args.lse.strides[1] = 2;
  args.lse.strides[2] = 16; // [Nq, Hq, B] in memory
  args.k.strides[1] = 0;
  args.v.strides[1] = 0;
  int64_t index = -1;
  EXPECT_STATUS(attn_fwd_select(owner.bundle, &args, &index), ATTN_SUCCESS, "");
  args = makeArgs(1, 8, 8, 1, 128, 128, /*lse=*/true);
  args.o.strides[0] = args.o.strides[2] = 0; // B = Nq = 1
  args.lse.strides[2] = 12345;
  EXPECT_STATUS(attn_fwd_select(owner.bundle, &args, &index), ATTN_SUCCESS, "");
}

} // namespace
