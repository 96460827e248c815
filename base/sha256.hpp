// SHA-256 (FIPS 180-4), for the settlement ledger's hash chain. Written here because the
// project links no crypto library; checked against the standard test vectors.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace schedsim {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  // The digest; the object must not be updated afterwards.
  std::array<std::uint8_t, 32> finish();

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// Lower-case hex digest of `data`.
std::string sha256_hex(std::string_view data);
// HMAC-SHA256 (RFC 2104) of `message` under `key`, lower-case hex; checked against the
// RFC 4231 vectors. For the keyed settlement ledger.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

}  // namespace schedsim
