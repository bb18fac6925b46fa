// EXPECT_THROW_WITH(statement, ErrorType, text): the statement throws ErrorType and its message
// contains text; anything else fails the test.
#pragma once

#include <gtest/gtest.h>

#include <string>

#define EXPECT_THROW_WITH(statement, ErrorType, text)                                            \
  do {                                                                                           \
    try {                                                                                        \
      statement;                                                                                 \
      ADD_FAILURE() << "expected " #ErrorType " containing '" << (text) << "'";                  \
    } catch (const ErrorType& e) {                                                               \
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << "message: " << e.what(); \
    }                                                                                            \
  } while (0)
