// Small helpers shared by the end-to-end benchmark programs.
#pragma once

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

namespace autocat::bench {

using Clock = std::chrono::steady_clock;

// Seconds elapsed since `start`.
inline double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "1,5,10" -> {1, 5, 10}.
inline std::vector<int> parse_list(const std::string& text) {
  std::vector<int> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) values.push_back(std::stoi(item));
  return values;
}

}  // namespace autocat::bench
