// Test support: self-signed TLS certificates made with OpenSSL's API (no openssl command, no
// download), for the TLS transport tests and xpra servers started with --bind-ssl/--bind-wss.
// A certificate is its own authority: pass its cert file as --ssl-ca-certs to trust it.
// Threading: plain functions.
#pragma once

#include <openssl/ssl.h>

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

// A TLS server context serving `cert` (the caller frees it: SSL_CTX_free). max_version, e.g.
// TLS1_VERSION: a server stuck on that version and older (security level 0, so OpenSSL 3 still
// offers them); 0: OpenSSL's defaults.
[[nodiscard]] SSL_CTX* make_tls_server_ctx(const TestCert& cert, int max_version = 0);

}  // namespace pixpath::xpra::testing
