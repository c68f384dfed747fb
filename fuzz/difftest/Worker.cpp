//===- Worker.cpp - Checking programs in a child process ---------------------===//
#include "Worker.h"

#include "Driver.h"
#include "Generator.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace tilejit::difftest {

std::string escapeLine(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\\')
      out += "\\\\";
    else
      out += c;
  }
  return out;
}

std::string unescapeLine(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    char n = s[++i];
    out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
  }
  return out;
}

bool Worker::start() {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0)
    return false;
  pid_t pid = fork();
  if (pid < 0)
    return false;
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    execl(self_.c_str(), self_.c_str(), "--worker", static_cast<char *>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  pid_ = pid;
  toChild_ = in[1];
  fromChild_ = out[0];
  jobs_ = 0;
  buffer_.clear();
  return true;
}

void Worker::stop() {
  if (pid_ < 0)
    return;
  close(toChild_);
  close(fromChild_);
  // The child ends at end of input; a stuck one is killed.
  for (int i = 0; i < 50; ++i) {
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    usleep(20000);
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

JobResult Worker::run(const std::string &job) {
  if (pid_ >= 0 && jobs_ >= jobsPerChild_)
    stop();
  if (pid_ < 0 && !start())
    return {"crash", "", "could not start a worker process"};
  ++jobs_;
  std::string line = job + "\n";
  signal(SIGPIPE, SIG_IGN);
  if (write(toChild_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    stop();
    return {"crash", "", "the worker process is gone"};
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
  while (true) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string l = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (l.rfind("result\t", 0) != 0)
        continue; // anything else the child printed
      std::istringstream fields(l);
      std::string tag, cls, reason, detail;
      std::getline(fields, tag, '\t');
      std::getline(fields, cls, '\t');
      std::getline(fields, reason, '\t');
      std::getline(fields, detail, '\t');
      JobResult r;
      r.failureClass = cls == "pass" ? "" : cls;
      r.notInterpreted = unescapeLine(reason);
      r.detail = unescapeLine(detail);
      return r;
    }
    auto left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      close(toChild_);
      close(fromChild_);
      pid_ = -1;
      return {"hang", "", "no result within " + std::to_string(static_cast<int>(timeout_)) + " s"};
    }
    pollfd pfd{fromChild_, POLLIN, 0};
    int n = poll(&pfd, 1, static_cast<int>(left * 1000) + 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      continue;
    char buf[65536];
    ssize_t got = read(fromChild_, buf, sizeof buf);
    if (got > 0) {
      buffer_.append(buf, static_cast<size_t>(got));
      continue;
    }
    // The child died.
    int status = 0;
    waitpid(pid_, &status, 0);
    close(toChild_);
    close(fromChild_);
    pid_ = -1;
    std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status)) +
                                                " (" + strsignal(WTERMSIG(status)) + ")"
                                          : "exited with status " + std::to_string(WEXITSTATUS(status));
    return {"crash", "", "the worker process " + why};
  }
}

int workerMain() {
  initDriver();
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream ws(line);
    std::string kind, arg;
    ws >> kind;
    std::getline(ws >> std::ws, arg);
    Verdict v;
    if (kind == "seed") {
      Program p = generateProgram(std::stoull(arg));
      v = checkProgram(p, printKernel(p));
    } else if (kind == "file") {
      std::ifstream f(arg);
      std::stringstream ss;
      ss << f.rdbuf();
      Program p;
      std::string text;
      if (auto err = parseRegression(ss.str(), p, text)) {
        v.failureClass = "bad-file";
        v.detail = arg + ": " + *err;
      } else {
        v = checkProgram(p, text);
      }
    } else {
      v.failureClass = "bad-job";
      v.detail = line;
    }
    clearCaches();
    std::cout << "result\t" << (v.failureClass.empty() ? "pass" : v.failureClass) << "\t"
              << escapeLine(v.notInterpreted) << "\t" << escapeLine(v.detail) << std::endl;
  }
  return 0;
}

} // namespace tilejit::difftest
