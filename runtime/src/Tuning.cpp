//===- Tuning.cpp - the variant chosen per call shape (tuning.json) -------===//

#include "Tuning.h"

#include "Bundle.h"
#include "attn/manifest/BundleFiles.h"
#include "attn/manifest/Manifest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace attn::runtime {

namespace json = llvm::json;

static bool fromJSON(const json::Value &value,
                     std::pair<std::string, TuningTable::Choice> &entry,
                     json::Path path) {
  json::ObjectMapper o(value, path);
  return o && o.map("shape", entry.first) &&
         o.map("kernel", entry.second.kernel) && o.map("ms", entry.second.ms) &&
         o.map("device", entry.second.device);
}

Status TuningTable::load(llvm::StringRef dir,
                         const llvm::StringSet<> &kernels) {
  llvm::SmallString<256> file(dir);
  llvm::sys::path::append(file, "tuning.json");
  path = file.str().str();
  auto corrupt = [&](const llvm::Twine &what) {
    return makeError(ATTN_ERROR_BUNDLE_CORRUPT,
                     path + ": " + what + " (delete it to re-tune)");
  };
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  if (auto error =
          bundle::readBundleFile(path, bundle::BundleFile::Tuning, buffer)) {
    if (error->kind == bundle::FileError::Missing)
      return Status::success(); // not tuned yet
    return makeError(ATTN_ERROR_BUNDLE_CORRUPT,
                     error->message + " (delete it to re-tune)");
  }
  llvm::Expected<json::Value> value = bundle::parseJSON(buffer->getBuffer());
  if (!value)
    return corrupt("not valid JSON: " + llvm::toString(value.takeError()));
  json::Path::Root root("tuning.json");
  json::ObjectMapper o(*value, root);
  int64_t version = 0;
  std::vector<std::pair<std::string, Choice>> entries;
  if (!o || !o.map("version", version) || !o.map("choices", entries))
    return corrupt(llvm::toString(root.getError()));
  if (version != kTuningVersion)
    return corrupt(llvm::formatv("version {0}, this runtime reads {1}", version,
                                 kTuningVersion));
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &[shape, choice] : entries) {
    if (shape.empty())
      return corrupt("a choice with an empty \"shape\"");
    if (!kernels.contains(choice.kernel))
      return corrupt("choice for \"" + shape + "\" names kernel \"" +
                     choice.kernel + "\", which the bundle does not have");
    if (!(choice.ms >= 0.0) || !std::isfinite(choice.ms))
      return corrupt(llvm::formatv("\"ms\" of the choice for \"{0}\" must "
                                   "be a time >= 0, but is {1}",
                                   shape, choice.ms));
    if (choice.device.empty())
      return corrupt("\"device\" of the choice for \"" + shape +
                     "\" is empty");
    if (!choices.try_emplace(shape, std::move(choice)).second)
      return corrupt("two choices for \"" + shape + "\"");
  }
  return Status::success();
}

bool TuningTable::empty() const {
  std::lock_guard<std::mutex> lock(mutex);
  return choices.empty();
}

std::optional<TuningTable::Choice>
TuningTable::lookup(llvm::StringRef shape) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = choices.find(shape.str());
  if (it == choices.end())
    return std::nullopt;
  return it->second;
}

Status TuningTable::record(llvm::StringRef shape, const Choice &choice) {
  std::lock_guard<std::mutex> lock(mutex);
  choices[shape.str()] = choice;
  json::Array entries;
  for (const auto &[s, c] : choices)
    entries.push_back(json::Object{{"shape", s},
                                   {"kernel", c.kernel},
                                   {"ms", c.ms},
                                   {"device", c.device}});
  std::string text = llvm::formatv(
      "{0:2}\n", json::Value(json::Object{{"version", kTuningVersion},
                                          {"choices", std::move(entries)}}));
  auto failed = [&](std::error_code ec) {
    return makeError(ATTN_ERROR_BUNDLE_NOT_FOUND,
                     "cannot write " + path + ": " + ec.message() +
                         "; the choice holds for this process only");
  };
  llvm::SmallString<256> temp;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, temp))
    return failed(ec);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(temp);
      return failed(ec);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return failed(ec);
  }
  return Status::success();
}

} // namespace attn::runtime
