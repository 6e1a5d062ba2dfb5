// Test support: self-signed TLS certificates made with OpenSSL's API (no openssl command, no
// download), for the TLS transport tests and xpra servers started with --bind-ssl/--bind-wss.
// A certificate is its own authority: pass its cert file as --ssl-ca-certs to trust it.
// Threading: plain functions.
#pragma once

#include <string>
#include <vector>

#include "pixpath/core/result.h"

namespace pixpath::xpra::testing {

struct TestCertOptions {
  std::string common_name = "pixpath test";
  std::vector<std::string> dns_names;  // subjectAltName DNS entries
  std::vector<std::string> ips;        // subjectAltName IP entries ("127.0.0.1", "::1")
  long valid_from_days = -1;           // relative to now
  long valid_until_days = 30;          // negative: already expired
};

struct TestCert {
  std::string cert_file;  // PEM certificate
  std::string key_file;   // PEM private key (unencrypted)
};

// Writes DIR/NAME.crt and DIR/NAME.key.
[[nodiscard]] Result<TestCert> make_test_cert(const std::string& dir, const std::string& name,
                                              const TestCertOptions& options);

}  // namespace pixpath::xpra::testing
